import { readdirSync, readFileSync } from "node:fs";
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
/**
 * The completions over which the cost of taking the next run is measured, the same at every depth
 * (the smallest depth holds about 970 runs): after the first ones, whose cost includes the gate
 * release, and before the end of the smallest drain, when slots go idle.
 */
const COST_WINDOW = { from: 100, to: 900 } as const;
/** Times each depth's cost window is measured (each time on a freshly built queue). */
const COST_REPEATS = 3;

/** Middle value (mean of the two middle ones for an even count); NaN readings sort last. */
export function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

interface DepthResult {
  depth: number;
  seedSeconds: number;
  startSeconds: number;
  probe: { requestsPerSecond: number; p50: number; p99: number; failures: number };
  drained: number;
  drainSeconds: number;
  /** Completions per second between 10 % and 90 % of the runs completed in the window. */
  rate: number;
  /** Completions per second over COST_WINDOW: the same window at every depth. */
  rateFirstThousand: number;
  /** The same over the first and the last fifth of that window (deep vs shallow queue). */
  rateEarly: number;
  rateLate: number;
  /** Server CPU cores busy during the drain. */
  drainCores: number;
  /** Server CPU milliseconds per completed run over the whole drain. */
  cpuMsPerRun: number;
  /** The same over completions COST_WINDOW.from to .to: the cost of taking (and running) the next run at this depth. */
  windowCpuMsPerRun: number;
  /** Server CPU ms per run over each tenth of what drained, deepest queue first. */
  cpuMsPerRunByTenth: number[];
}

/** One poll during a drain: ms since the release, runs completed, server CPU seconds so far. */
export interface DrainSample {
  at: number;
  completed: number;
  cpuSeconds: number;
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

/**
 * CPU seconds a process's threads have run, from the scheduler's nanosecond counters
 * (/proc/<pid>/task/<tid>/schedstat). /proc/<pid>/stat counts in 10 ms ticks: ±20 ms over a window
 * of ~250 ms of CPU would be ±8 % on its own.
 */
export function readCpuSecondsPrecise(pid: number): number {
  let nanoseconds = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nanoseconds / 1e9;
}

/**
 * A sampled quantity (time, CPU) at the moment `count` runs had completed, interpolated between
 * the polls around it; NaN when the drain never got that far.
 */
function valueWhenCompleted<T extends { completed: number }>(
  samples: T[],
  count: number,
  value: (sample: T) => number,
): number {
  const index = samples.findIndex((sample) => sample.completed >= count);
  if (index === -1) return Number.NaN;
  if (index === 0) return value(samples[0]!);
  const before = samples[index - 1]!;
  const after = samples[index]!;
  const fraction = (count - before.completed) / Math.max(1, after.completed - before.completed);
  return value(before) + fraction * (value(after) - value(before));
}

/** Completions per second between the a-th and b-th fraction of `total`, from (time, completed) samples. */
export function rateBetween(
  samples: Array<{ at: number; completed: number }>,
  total: number,
  a: number,
  b: number,
) {
  const timeAt = (count: number) => valueWhenCompleted(samples, count, (sample) => sample.at);
  const from = total * a;
  const to = total * b;
  return ((to - from) / (timeAt(to) - timeAt(from))) * 1000;
}

/** Server CPU milliseconds per run over completions `from` to `to` (NaN if the drain stopped short). */
export function cpuMsPerRunBetween(samples: DrainSample[], from: number, to: number): number {
  const cpuAt = (count: number) => valueWhenCompleted(samples, count, (sample) => sample.cpuSeconds);
  return ((cpuAt(to) - cpuAt(from)) * 1000) / (to - from);
}

async function measureDepth(
  context: BenchContext,
  depth: number,
  drainLimitMs: number,
  /** Stops polling once this many runs have completed (a repeat that only needs the cost window). */
  stopAfterCompleted = Number.POSITIVE_INFINITY,
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
    const samples: DrainSample[] = [];
    const openedAt = performance.now();
    const stopCpu = startCpuWindow([server.pid]);
    await openGate(context.upstream.url);
    for (;;) {
      const stats = await engineStats(server);
      const completed = queuedRuns - stats.queued - Math.max(0, stats.executing);
      samples.push({
        at: performance.now() - openedAt,
        completed,
        cpuSeconds: readCpuSecondsPrecise(server.pid),
      });
      const drained = stats.queued === 0 && stats.executing === 0;
      if (drained || completed >= stopAfterCompleted || performance.now() - openedAt > drainLimitMs) break;
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
      rateFirstThousand: rateBetween(samples, COST_WINDOW.to + COST_WINDOW.from, 0.1, 0.9),
      rateEarly: rateBetween(samples, last.completed, 0.1, 0.3),
      rateLate: rateBetween(samples, last.completed, 0.7, 0.9),
      drainCores: (cpu.cpuSeconds[server.pid] ?? Number.NaN) / cpu.wallSeconds,
      cpuMsPerRun: ((cpu.cpuSeconds[server.pid] ?? Number.NaN) * 1000) / last.completed,
      windowCpuMsPerRun: cpuMsPerRunBetween(samples, COST_WINDOW.from, COST_WINDOW.to),
      cpuMsPerRunByTenth: Array.from({ length: 10 }, (_, tenth) =>
        cpuMsPerRunBetween(samples, (last.completed * tenth) / 10, (last.completed * (tenth + 1)) / 10),
      ),
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
  /** Cost-window readings per depth: the full drain's, then the repeats'. */
  const windowCosts = new Map<number, number[]>();
  for (const depth of depths) {
    context.log(`queue: depth ${depth}`);
    const result = await measureDepth(context, depth, drainLimitMs);
    results.push(result);
    windowCosts.set(depth, [result.windowCpuMsPerRun]);
  }
  // One window is ~800 runs, a few hundred ms of CPU: a GC pause or a busy neighbour core moves
  // it by ~10 %. Each depth is measured again (interleaved, to spread any drift over all depths),
  // and the median is compared.
  for (let round = 1; round < COST_REPEATS; round++) {
    for (const depth of depths) {
      context.log(`queue: depth ${depth}, cost window again (${round + 1} of ${COST_REPEATS})`);
      const repeat = await measureDepth(context, depth, drainLimitMs, COST_WINDOW.to + 100);
      windowCosts.get(depth)!.push(repeat.windowCpuMsPerRun);
    }
  }
  const medianCost = (depth: number) => median(windowCosts.get(depth)!);
  // Warm the JIT once, then measure.
  schedulerCost(1_000, 20_000);
  const scheduler = depths.map((depth) => ({ depth, nanoseconds: schedulerCost(depth, 200_000) }));

  const rows = results.map((result) => [
    formatCount(result.depth),
    `${result.seedSeconds.toFixed(1)} s`,
    `${result.startSeconds.toFixed(1)} s`,
    `${formatCount(result.probe.requestsPerSecond)} (p50 ${formatMs(result.probe.p50)}, p99 ${formatMs(result.probe.p99)} ms${result.probe.failures ? `, ${result.probe.failures} failed` : ""})`,
    `${formatCount(result.drained)} in ${result.drainSeconds.toFixed(1)} s (server ${formatCores(result.drainCores)} cores)`,
    `${formatMs(medianCost(result.depth))} (${windowCosts
      .get(result.depth)!
      .map((cost) => formatMs(cost))
      .join(", ")})`,
    formatMs(result.cpuMsPerRun),
    formatCount(result.rateFirstThousand),
    formatCount(result.rate),
    `${formatCount(result.rateEarly)} / ${formatCount(result.rateLate)}`,
    `${formatCount(scheduler.find((entry) => entry.depth === result.depth)?.nanoseconds ?? Number.NaN)} ns`,
  ]);
  const rates = results.map((result) => result.rate).filter(Number.isFinite);
  const costs = results.map((result) => medianCost(result.depth));
  const growth = Math.max(...costs) / Math.min(...costs);
  const deepest = results[results.length - 1]!;
  const targets: TargetCheck[] = [
    {
      target: `dequeue cost flat ${formatCount(depths[0]!)}→${formatCount(deepest.depth)} (server CPU per completed run over completions ${COST_WINDOW.from}–${COST_WINDOW.to} of the drain, largest/smallest ≤ 1.25)`,
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
      `Server CPU per run = CPU seconds of the server / runs completed: over completions ${COST_WINDOW.from} to ${COST_WINDOW.to} after the release (the target uses it), the same ${COST_WINDOW.to - COST_WINDOW.from} runs at every depth, read from the scheduler's nanosecond counters (/proc/<pid>/task/*/schedstat) at each poll and interpolated to those completions, so the gate release before it and the idle slots at the end of the smallest drain stay out; and over the whole drain. ` +
      `The window is measured ${COST_REPEATS} times per depth, each on a freshly built queue (the first with the full drain, the others stopped after ${formatCount(COST_WINDOW.to + 100)} completions; the depths interleaved), and the target compares the medians. ` +
      `Window runs/s = completions per second over the same completions ${COST_WINDOW.from} to ${COST_WINDOW.to}. ` +
      "Drain rate = completions per second between 10 % and 90 % of what completed in the drain; early/late = 10–30 % vs 70–90 % of it (a deep queue vs the same queue further drained). " +
      "The scheduler column times `RunScheduler` alone in this process: take the next run, finish it, enqueue one, at a constant depth.",
    "",
    markdownTable(
      [
        "pending runs",
        "seed (store)",
        "restart to queue loaded",
        "create-run at that depth: req/s",
        "drained",
        `server CPU ms per run, completions ${COST_WINDOW.from}–${COST_WINDOW.to}: median (each reading)`,
        "server CPU ms per run, whole drain",
        `completions ${COST_WINDOW.from}–${COST_WINDOW.to}: runs/s`,
        "drain rate (runs/s)",
        "early / late runs/s",
        "scheduler take+finish+enqueue",
      ],
      rows,
    ),
    "",
    "Server CPU ms per run over each tenth of the drain, from the deepest queue to the nearly empty one (the first drain at each depth of 10,000 or more: the same queue as it shrinks):",
    "",
    ...results
      // A tenth of the smallest drain is ~100 runs: too few for a CPU reading worth showing.
      .filter((result) => result.depth >= 10_000)
      .map(
        (result) =>
          `- ${formatCount(result.depth)} pending: ${result.cpuMsPerRunByTenth.map((cost) => formatMs(cost)).join(" · ")}`,
      ),
    "",
    `End-to-end completed dev:echo runs per second (queue drain, no concurrent creates): ${rates.map((rate, index) => `${formatCount(rate)} at depth ${formatCount(results[index]!.depth)}`).join(", ")}.`,
  ].join("\n");
  return { title: "4. Completed runs per second and queue depth", body, targets };
}
