import { join } from "node:path";
import { type NewRun, RunScheduler, uuidv7 } from "@promptrun/core";
import { openSqliteStore } from "@promptrun/db";
import { benchPrompts } from "../bench-prompts.ts";
import { engineStats, mapConcurrently, openGate, pollUntil, startBenchServer } from "../bench-server.ts";
import { formatCores, formatCount, formatMs } from "../format.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { runLoadGeneratorProcess } from "../load-generator-process.ts";
import { markdownTable } from "../markdown-table.ts";
import { startCpuWindow } from "../process-stats.ts";
import { startPromptrunServer } from "../promptrun-server.ts";
import type { BenchContext, SectionResult, TargetCheck } from "./bench-context.ts";

/** Execution slots (global = per tenant) and the gate runs that hold them while the queue is built. */
const SLOTS = 32;
/** Runs created through the API at depth, to time create-run against a deep queue. */
const PROBE_RUNS = 500;
/** dev:echo runs a second tenant executes first, so the drain is measured on a warm (JIT) server. */
const WARM_UP_RUNS = 3_000;

interface DepthResult {
  depth: number;
  seedSeconds: number;
  startSeconds: number;
  probe: { requestsPerSecond: number; p50: number; p99: number; failures: number };
  drained: number;
  drainSeconds: number;
  /** Completions per second between 10 % and 90 % of the runs completed in the window. */
  rate: number;
  /** Completions 100 to 900 after the release: the same window at every depth. */
  rateFirstThousand: number;
  /** The same over the first and the last fifth of that window (deep vs shallow queue). */
  rateEarly: number;
  rateLate: number;
  /** Server CPU cores busy during the drain. */
  drainCores: number;
  /** Server CPU milliseconds per completed run over the drain: the cost, whatever else loads the machine. */
  cpuMsPerRun: number;
}

/** Writes the gate runs, then the echo runs, as pending rows through the store port (oldest first). */
async function seedPendingRuns(databaseUrl: string, tenantId: string, echoRuns: number): Promise<void> {
  const store = await openSqliteStore({ url: databaseUrl });
  try {
    const version = async (slug: string) => {
      const found = await store.prompts.resolveVersion(tenantId, slug, { kind: "latest" });
      if (!found) throw new Error(`prompt ${slug} not found`);
      return found;
    };
    const gate = await version(benchPrompts.gate.slug);
    const echo = await version(benchPrompts.echo.slug);
    const startMs = Date.now() - (SLOTS + echoRuns) - 1_000;
    const runFor = (index: number): NewRun => {
      const prompt = index < SLOTS ? gate : echo;
      const createdAt = startMs + index;
      return {
        id: uuidv7(createdAt),
        tenantId,
        threadId: uuidv7(createdAt),
        channel: "default",
        promptId: prompt.promptId,
        promptVersionId: prompt.id,
        promptSlug: prompt.slug,
        promptVersion: prompt.version,
        priority: "normal",
        environment: "production",
        inputs: { message: "queued bench run" },
        metadata: {},
        encryptedEnvVars: null,
        createdAt: new Date(createdAt),
      };
    };
    // Concurrent creates share group commits.
    await mapConcurrently([...Array(SLOTS + echoRuns).keys()], 256, (index) =>
      store.runs.create(runFor(index)),
    );
  } finally {
    await store.close();
  }
}

/** Completions per second between the a-th and b-th fraction of `total`, from (time, completed) samples. */
export function rateBetween(
  samples: Array<{ at: number; completed: number }>,
  total: number,
  a: number,
  b: number,
) {
  const timeAt = (count: number) => {
    const index = samples.findIndex((sample) => sample.completed >= count);
    if (index <= 0) return samples[Math.max(0, index)]?.at ?? Number.NaN;
    const before = samples[index - 1]!;
    const after = samples[index]!;
    const fraction = (count - before.completed) / Math.max(1, after.completed - before.completed);
    return before.at + fraction * (after.at - before.at);
  };
  const from = total * a;
  const to = total * b;
  return ((to - from) / (timeAt(to) - timeAt(from))) * 1000;
}

async function measureDepth(
  context: BenchContext,
  depth: number,
  drainLimitMs: number,
): Promise<DepthResult> {
  const echoRuns = depth - SLOTS - PROBE_RUNS;
  const first = await startBenchServer({ promptsDir: context.promptsDir, upstreamUrl: context.upstream.url });
  const warmUp = await first.cli<{ tenant: { id: string }; apiKey: string }>("tenants", "create", "warm-up");
  await first.cli("prompts", "push", context.promptsDir, "--tenant", warmUp.tenant.id);
  await first.stop();
  const databaseUrl = `file:${join(first.dataDir, "promptrun.db")}`;
  const seedStarted = performance.now();
  await seedPendingRuns(databaseUrl, first.tenantId, echoRuns);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  await fetch(`${context.upstream.url}/control/close-gate`, { method: "POST" });
  const startStarted = performance.now();
  const server = await startPromptrunServer({
    reuse: first,
    env: {
      PROMPTRUN_PROVIDERS: `bench=${context.upstream.url}/v1`,
      // The demo tenant's queue drains through its SLOTS; the other SLOTS serve the warm-up tenant.
      PROMPTRUN_CONCURRENCY: String(2 * SLOTS),
      PROMPTRUN_TENANT_CONCURRENCY: String(SLOTS),
    },
  });
  try {
    const parkedAndQueued = async () => {
      const stats = await engineStats(server);
      return stats.executing === SLOTS && stats.queued === echoRuns;
    };
    if (!(await pollUntil(parkedAndQueued, 60_000))) {
      throw new Error(`queue not loaded: ${JSON.stringify(await engineStats(server))}`);
    }
    const startSeconds = (performance.now() - startStarted) / 1000;

    await runLoadGeneratorProcess({
      url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${warmUp.apiKey}` },
      body: JSON.stringify({ inputs: { message: "warm up" } }),
      concurrency: 16,
      totalRequests: WARM_UP_RUNS,
    });
    if (!(await pollUntil(parkedAndQueued, 60_000))) {
      throw new Error(`warm-up runs did not finish: ${JSON.stringify(await engineStats(server))}`);
    }

    const probe = await runLoadGeneratorProcess({
      url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ inputs: { message: "probe" } }),
      concurrency: 16,
      totalRequests: PROBE_RUNS,
    });
    const probeLatency = LatencyHistogram.from(probe.latency);

    // Release the gate: the 32 held runs end, then the queue drains through the same slots.
    const queuedRuns = depth - SLOTS;
    const samples: Array<{ at: number; completed: number }> = [];
    const openedAt = performance.now();
    const stopCpu = startCpuWindow([server.pid]);
    await openGate(context.upstream.url);
    for (;;) {
      const stats = await engineStats(server);
      const completed = queuedRuns - stats.queued - Math.max(0, stats.executing);
      samples.push({ at: performance.now() - openedAt, completed });
      if ((stats.queued === 0 && stats.executing === 0) || performance.now() - openedAt > drainLimitMs) break;
      await Bun.sleep(50);
    }
    const cpu = stopCpu();
    const last = samples[samples.length - 1]!;
    return {
      depth,
      seedSeconds,
      startSeconds,
      probe: {
        requestsPerSecond: probe.requests / (probe.elapsedMs / 1000),
        p50: probeLatency.percentile(50),
        p99: probeLatency.percentile(99),
        failures: probe.non2xx + probe.errors,
      },
      drained: last.completed,
      drainSeconds: last.at / 1000,
      rate: rateBetween(samples, last.completed, 0.1, 0.9),
      rateFirstThousand: rateBetween(samples, Math.min(1_000, last.completed), 0.1, 0.9),
      rateEarly: rateBetween(samples, last.completed, 0.1, 0.3),
      rateLate: rateBetween(samples, last.completed, 0.7, 0.9),
      drainCores: (cpu.cpuSeconds[server.pid] ?? Number.NaN) / cpu.wallSeconds,
      cpuMsPerRun: ((cpu.cpuSeconds[server.pid] ?? Number.NaN) * 1000) / last.completed,
    };
  } finally {
    await server.dispose(3_000);
  }
}

/** The scheduler alone: take the next run, finish it and enqueue another, at a constant depth. */
function schedulerCost(depth: number, operations: number): number {
  const scheduler = new RunScheduler({ concurrency: SLOTS, tenantConcurrency: SLOTS, agingMs: 60_000 });
  let sequence = 0;
  const enqueue = () => {
    const id = String(sequence++);
    scheduler.enqueue({
      runId: id,
      tenantId: "t",
      threadId: id,
      channel: "default",
      priority: "normal",
      enqueuedAt: sequence,
    });
  };
  for (let index = 0; index < depth; index++) enqueue();
  const started = Bun.nanoseconds();
  for (let index = 0; index < operations; index++) {
    const next = scheduler.next();
    if (!next) throw new Error("scheduler returned no run");
    scheduler.finish(next.runId);
    enqueue();
  }
  return (Bun.nanoseconds() - started) / operations;
}

/** 4. End-to-end completed dev:echo runs per second, and how draining scales with queue depth. */
export async function queueSection(context: BenchContext): Promise<SectionResult> {
  const depths = context.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const drainLimitMs = context.quick ? 20_000 : 45_000;
  const results: DepthResult[] = [];
  for (const depth of depths) {
    context.log(`queue: depth ${depth}`);
    results.push(await measureDepth(context, depth, drainLimitMs));
  }
  // Warm the JIT once, then measure.
  schedulerCost(1_000, 20_000);
  const scheduler = depths.map((depth) => ({ depth, nanoseconds: schedulerCost(depth, 200_000) }));

  const rows = results.map((result) => [
    formatCount(result.depth),
    `${result.seedSeconds.toFixed(1)} s`,
    `${result.startSeconds.toFixed(1)} s`,
    `${formatCount(result.probe.requestsPerSecond)} (p50 ${formatMs(result.probe.p50)}, p99 ${formatMs(result.probe.p99)} ms${result.probe.failures ? `, ${result.probe.failures} failed` : ""})`,
    `${formatCount(result.drained)} in ${result.drainSeconds.toFixed(1)} s (server ${formatCores(result.drainCores)} cores)`,
    formatMs(result.cpuMsPerRun),
    formatCount(result.rateFirstThousand),
    formatCount(result.rate),
    `${formatCount(result.rateEarly)} / ${formatCount(result.rateLate)}`,
    `${formatCount(scheduler.find((entry) => entry.depth === result.depth)?.nanoseconds ?? Number.NaN)} ns`,
  ]);
  const rates = results.map((result) => result.rate).filter(Number.isFinite);
  const costs = results.map((result) => result.cpuMsPerRun);
  const growth = Math.max(...costs) / Math.min(...costs);
  const deepest = results[results.length - 1]!;
  const targets: TargetCheck[] = [
    {
      target: `dequeue cost flat ${formatCount(depths[0]!)}→${formatCount(deepest.depth)} (server CPU per completed run while draining, largest/smallest ≤ 1.25)`,
      measured: `×${growth.toFixed(2)} (${costs.map((cost) => formatMs(cost)).join(" / ")} ms per run)`,
      met: growth <= 1.25,
    },
  ];
  const body = [
    `Each depth uses a fresh server (concurrency ${2 * SLOTS}, per tenant ${SLOTS}). The pending runs are written through the store port (\`@promptrun/db\`, the same group-committed \`runs.create\` the API uses) with the server stopped: ${SLOTS} runs of a prompt whose upstream holds them, then the dev:echo runs. ` +
      `On start the engine reloads them (the crash-recovery path): the ${SLOTS} held runs take every slot of the demo tenant and the rest stays queued. ` +
      `A second tenant then executes ${formatCount(WARM_UP_RUNS)} dev:echo runs on the other ${SLOTS} slots so that the drain is measured warm. ` +
      `Then ${PROBE_RUNS} more runs are created through the API (16 connections, Bun load generator) to time create-run against that queue, so the depth is the number of pending runs. ` +
      `Releasing the held runs starts the drain; GET /health is polled every 50 ms (completed = queued at release − queued − executing), for at most ${drainLimitMs / 1000} s. ` +
      "Server CPU per run = CPU seconds of the server over the drain / runs completed: the cost of taking and running the next run, which other work on the machine does not change (the target uses it). " +
      "First 1,000 runs = completions 100 to 900 after the release, the same window at every depth. " +
      "Drain rate = completions per second between 10 % and 90 % of what completed in the window; early/late = 10–30 % vs 70–90 % of it (a deep queue vs the same queue further drained). " +
      "The scheduler column times `RunScheduler` alone in this process: take the next run, finish it, enqueue one, at a constant depth.",
    "",
    markdownTable(
      [
        "pending runs",
        "seed (store)",
        "restart to queue loaded",
        "create-run at that depth: req/s",
        "drained",
        "server CPU ms per run",
        "first 1,000 runs: runs/s",
        "drain rate (runs/s)",
        "early / late runs/s",
        "scheduler take+finish+enqueue",
      ],
      rows,
    ),
    "",
    `End-to-end completed dev:echo runs per second (queue drain, no concurrent creates): ${rates.map((rate, index) => `${formatCount(rate)} at depth ${formatCount(results[index]!.depth)}`).join(", ")}.`,
  ].join("\n");
  return { title: "4. Completed runs per second and queue depth", body, targets };
}
