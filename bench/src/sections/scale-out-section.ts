/**
 * Scale-out: create-run on SQLite vs Postgres + Redis with 1 and 3 instances, and completed
 * dev:echo runs per second on 1 vs 3 instances, in one run. Every row uses the Bun keep-alive
 * generator in its own process (wrk pins one address per thread, it cannot go round-robin per
 * request), so the rows compare like with like.
 */
import { availableParallelism } from "node:os";
import { benchPrompts } from "../bench-prompts.ts";
import { startBenchServer } from "../bench-server.ts";
import { spawnChild } from "../child-channel.ts";
import { formatCores, formatCount, formatMs, formatPercent } from "../format.ts";
import type { HttpLoadOptions } from "../http-load.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { runLoadGeneratorProcess } from "../load-generator-process.ts";
import { startMachineCpuWindow } from "../machine-cpu.ts";
import { markdownTable } from "../markdown-table.ts";
import { startCpuWindow } from "../process-stats.ts";
import { parkClusterSlots, type ScaleOutCluster, startScaleOutCluster } from "../scale-out-cluster.ts";
import { createScaleOutStorage, type ScaleOutStorage, scaleOutStorageMissing } from "../scale-out-storage.ts";
import type { BenchContext, SectionResult } from "./bench-context.ts";
import { rateBetween } from "./queue-section.ts";

export const SCALE_OUT_TITLE = "Scale-out: Postgres + Redis, 1 and 3 instances";
const POSTGRES_URL = process.env.PROMPTRUN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.PROMPTRUN_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const HELLO_SCRIPT = `${import.meta.dir}/../processes/hello-server.ts`;
const CONNECTIONS = 100;
/** The default per-tenant limit (cluster-wide on Postgres): parked, it keeps created runs queued. */
const TENANT_SLOTS = 8;
/** Execution slots for the end-to-end rows: per instance, and for the tenant across the cluster. */
const E2E_SLOTS = 32;

interface Throughput {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
  firstError: string | null;
  serverCores: number;
  generatorCores: number;
  machineCores: number;
}

/** Warm up, then one measured window with CPU use of the targets, the generator and the machine. */
async function measureThroughput(
  load: Omit<HttpLoadOptions, "durationMs">,
  pids: number[],
  seconds: number,
  warmSeconds: number,
): Promise<Throughput> {
  await runLoadGeneratorProcess({ ...load, durationMs: warmSeconds * 1000 });
  const stopCpu = startCpuWindow(pids);
  const stopMachine = startMachineCpuWindow();
  const result = await runLoadGeneratorProcess({ ...load, durationMs: seconds * 1000 });
  const machineCores = stopMachine();
  const cpu = stopCpu();
  const latency = LatencyHistogram.from(result.latency);
  return {
    requestsPerSecond: result.requests / (result.elapsedMs / 1000),
    p50: latency.percentile(50),
    p99: latency.percentile(99),
    failures: result.non2xx + result.errors,
    firstError: result.firstError,
    serverCores: pids.reduce((sum, pid) => sum + (cpu.cpuSeconds[pid] ?? Number.NaN), 0) / cpu.wallSeconds,
    generatorCores: result.cpuSeconds / cpu.wallSeconds,
    machineCores,
  };
}

const createLoad = (urls: string[], apiKey: string, concurrency: number) => ({
  url: urls[0]!,
  urls: urls.map((url) => `${url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`),
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
  body: JSON.stringify({ inputs: { message: "hello bench" } }),
  concurrency,
});

/** Tracks what the section starts, so everything is stopped and dropped whatever fails. */
class Resources {
  private readonly cleanups: Array<() => Promise<void>> = [];
  add(cleanup: () => Promise<void>) {
    this.cleanups.push(cleanup);
  }
  async release() {
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  }
}

async function postgresCluster(
  context: BenchContext,
  resources: Resources,
  count: number,
  env: Record<string, string> = {},
): Promise<{ cluster: ScaleOutCluster; storage: ScaleOutStorage }> {
  const storage = await createScaleOutStorage(POSTGRES_URL, REDIS_URL);
  resources.add(() => storage.dispose());
  const cluster = await startScaleOutCluster({
    count,
    promptsDir: context.promptsDir,
    upstreamUrl: context.upstream.url,
    env: { ...storage.env, ...env },
  });
  resources.add(() => cluster.dispose());
  return { cluster, storage };
}

interface Completion {
  instances: number;
  runs: number;
  createSeconds: number;
  drainedSeconds: number;
  finished: number;
  /** Completions per second between 10 % and 90 % of the finished runs. */
  rate: number;
  overall: number;
  serverCores: number;
  machineCores: number;
  cpuMsPerRun: number;
}

/** Creates `runs` dev:echo runs round-robin over the instances and times them to completion (read from the database). */
async function measureCompletion(
  context: BenchContext,
  count: number,
  runs: number,
  limitMs: number,
): Promise<Completion> {
  const resources = new Resources();
  try {
    const { cluster, storage } = await postgresCluster(context, resources, count, {
      PROMPTRUN_CONCURRENCY: String(E2E_SLOTS),
      PROMPTRUN_TENANT_CONCURRENCY: String(E2E_SLOTS),
    });
    const urls = cluster.instances.map((instance) => instance.url);
    // A warm-up batch first, so the JIT is warm in every instance.
    const warmUp = Math.min(300, runs);
    await runLoadGeneratorProcess({ ...createLoad(urls, cluster.apiKey, 16), totalRequests: warmUp });
    const warmDeadline = Date.now() + 30_000;
    while ((await storage.finishedRuns()) < warmUp && Date.now() < warmDeadline) await Bun.sleep(50);

    const base = await storage.finishedRuns();
    const pids = cluster.instances.map((instance) => instance.pid);
    const stopCpu = startCpuWindow(pids);
    const stopMachine = startMachineCpuWindow();
    const startedAt = performance.now();
    const samples: Array<{ at: number; completed: number }> = [{ at: 0, completed: 0 }];
    let createSeconds = Number.NaN;
    const creating = runLoadGeneratorProcess({
      ...createLoad(urls, cluster.apiKey, 32),
      totalRequests: runs,
    }).then((result) => {
      createSeconds = result.elapsedMs / 1000;
      return result;
    });
    for (;;) {
      await Bun.sleep(50);
      const completed = (await storage.finishedRuns()) - base;
      samples.push({ at: performance.now() - startedAt, completed });
      if (completed >= runs || performance.now() - startedAt > limitMs) break;
    }
    const machineCores = stopMachine();
    const cpu = stopCpu();
    const created = await creating;
    if (created.ok !== runs)
      throw new Error(`only ${created.ok} of ${runs} runs created: ${created.firstError}`);
    const last = samples[samples.length - 1]!;
    const serverSeconds = pids.reduce((sum, pid) => sum + (cpu.cpuSeconds[pid] ?? Number.NaN), 0);
    return {
      instances: count,
      runs,
      createSeconds,
      drainedSeconds: last.at / 1000,
      finished: last.completed,
      rate: rateBetween(samples, last.completed, 0.1, 0.9),
      overall: last.completed / (last.at / 1000),
      serverCores: serverSeconds / cpu.wallSeconds,
      machineCores,
      cpuMsPerRun: (serverSeconds * 1000) / last.completed,
    };
  } finally {
    await resources.release();
  }
}

/** `bun run bench -- --only=scale-out`: writes docs/BENCHMARKS-SCALE-OUT.md. */
export async function scaleOutSection(context: BenchContext): Promise<SectionResult> {
  const missing = await scaleOutStorageMissing(POSTGRES_URL, REDIS_URL);
  if (missing) {
    return { title: SCALE_OUT_TITLE, body: "", targets: [], skipped: `scale-out skipped: ${missing}` };
  }
  const seconds = context.quick ? 3 : 6;
  const warmSeconds = context.quick ? 1 : 2;
  const e2eRuns = context.quick ? 1_000 : 3_000;
  const rows: Array<{ name: string; instances: number; measured: Throughput }> = [];

  const hello = spawnChild(["bun", HELLO_SCRIPT], { fileLimit: 4096 });
  try {
    const { url } = await hello.next<{ type: string; url: string }>("ready", 30_000);
    context.log("scale-out: hello-world");
    const measured = await measureThroughput(
      { url: `${url}/`, method: "GET", concurrency: CONNECTIONS },
      [hello.pid],
      seconds,
      warmSeconds,
    );
    rows.push({ name: "Bun.serve hello-world (ceiling)", instances: 1, measured });
  } finally {
    await hello.stop();
  }

  context.log("scale-out: create-run on SQLite");
  const sqlite = await startBenchServer({
    promptsDir: context.promptsDir,
    upstreamUrl: context.upstream.url,
  });
  try {
    await parkClusterSlots(
      { instances: [sqlite], apiKey: sqlite.apiKey, dispose: async () => {} },
      context.upstream.url,
      TENANT_SLOTS,
    );
    const measured = await measureThroughput(
      createLoad([sqlite.url], sqlite.apiKey, CONNECTIONS),
      [sqlite.pid],
      seconds,
      warmSeconds,
    );
    rows.push({ name: "create-run, SQLite", instances: 1, measured });
  } finally {
    await sqlite.dispose(3_000);
  }

  for (const count of [1, 3]) {
    context.log(`scale-out: create-run on Postgres + Redis, ${count} instance(s)`);
    const resources = new Resources();
    try {
      const { cluster } = await postgresCluster(context, resources, count);
      await parkClusterSlots(cluster, context.upstream.url, TENANT_SLOTS);
      const measured = await measureThroughput(
        createLoad(
          cluster.instances.map((instance) => instance.url),
          cluster.apiKey,
          CONNECTIONS,
        ),
        cluster.instances.map((instance) => instance.pid),
        seconds,
        warmSeconds,
      );
      rows.push({ name: "create-run, Postgres + Redis", instances: count, measured });
    } finally {
      await resources.release();
    }
  }
  await fetch(`${context.upstream.url}/control/open-gate`, { method: "POST" });

  const completions: Completion[] = [];
  for (const count of [1, 3]) {
    context.log(`scale-out: ${formatCount(e2eRuns)} dev:echo runs to completion on ${count} instance(s)`);
    completions.push(await measureCompletion(context, count, e2eRuns, 45_000));
  }

  const ceiling = rows[0]!.measured.requestsPerSecond;
  const throughputTable = markdownTable(
    [
      "target",
      "instances",
      "req/s",
      "p50 ms",
      "p99 ms",
      "failures",
      "Promptrun cores",
      "generator cores",
      "machine cores",
      "vs hello-world",
    ],
    rows.map(({ name, instances, measured }) => [
      name,
      instances,
      formatCount(measured.requestsPerSecond),
      formatMs(measured.p50),
      formatMs(measured.p99),
      `${formatCount(measured.failures)}${measured.firstError ? ` (${measured.firstError})` : ""}`,
      formatCores(measured.serverCores),
      formatCores(measured.generatorCores),
      formatCores(measured.machineCores),
      name.startsWith("Bun.serve") ? "" : formatPercent(measured.requestsPerSecond / ceiling),
    ]),
  );
  const completionTable = markdownTable(
    [
      "instances",
      "runs",
      "created in s",
      "finished",
      "last finished at s",
      "runs/s (10–90 %)",
      "runs/s overall",
      "Promptrun cores",
      "machine cores",
      "Promptrun CPU ms/run",
    ],
    completions.map((row) => [
      row.instances,
      formatCount(row.runs),
      row.createSeconds.toFixed(1),
      formatCount(row.finished),
      row.drainedSeconds.toFixed(1),
      formatCount(row.rate),
      formatCount(row.overall),
      formatCores(row.serverCores),
      formatCores(row.machineCores),
      formatMs(row.cpuMsPerRun),
    ]),
  );
  const pg1 = rows.find((row) => row.name.includes("Postgres") && row.instances === 1)?.measured;
  const pg3 = rows.find((row) => row.name.includes("Postgres") && row.instances === 3)?.measured;
  const body = [
    "### Create-run throughput and latency at 100 connections",
    "",
    `Load generator: Bun keep-alive fetch generator in its own process, ${CONNECTIONS} connections, requests round-robin over the instances' ports; ` +
      `${warmSeconds} s warm-up then ${seconds} s measured per row. Each row starts fresh servers on a fresh SQLite file or a fresh Postgres database and Redis key prefix. ` +
      `${TENANT_SLOTS} runs of a prompt whose upstream holds them keep the demo tenant's execution slots busy (a cluster-wide limit on Postgres), so every created run stays queued and the rows measure accepting a run alone. ` +
      '"Promptrun cores" = CPU seconds / wall seconds of the server process(es); "machine cores" = all busy CPU on the machine (Postgres and Redis included).',
    "",
    throughputTable,
    "",
    "### Completed runs per second (dev:echo) on Postgres + Redis",
    "",
    `${formatCount(e2eRuns)} runs of a dev:echo prompt (no delay) created at 32 connections round-robin over the instances, after a 300-run warm-up; ` +
      `completions counted in the database every 50 ms until all ${formatCount(e2eRuns)} are done (45 s cap). ` +
      `Execution slots: ${E2E_SLOTS} per instance and ${E2E_SLOTS} for the tenant across the cluster.`,
    "",
    completionTable,
  ].join("\n");
  return { title: SCALE_OUT_TITLE, body: `${summary(pg1, pg3, completions)}\n\n${body}`, targets: [] };
}

/** One paragraph with the ratios the tables hold, so the report reads without arithmetic. */
function summary(
  pg1: Throughput | undefined,
  pg3: Throughput | undefined,
  completions: Completion[],
): string {
  const [one, three] = completions;
  const parts: string[] = [];
  if (pg1 && pg3) {
    parts.push(
      `Create-run at ${CONNECTIONS} connections: 3 instances reach ${formatPercent(pg3.requestsPerSecond / pg1.requestsPerSecond)} of 1 instance's req/s on Postgres + Redis (${formatCount(pg3.requestsPerSecond)} vs ${formatCount(pg1.requestsPerSecond)}).`,
    );
  }
  if (one && three) {
    parts.push(
      `Completed dev:echo runs: 3 instances reach ${formatPercent(three.rate / one.rate)} of 1 instance's rate (${formatCount(three.rate)} vs ${formatCount(one.rate)} runs/s).`,
    );
  }
  for (const row of completions) {
    if (row.finished < row.runs) {
      parts.push(
        `With ${row.instances} instance(s), ${formatCount(row.finished)} of ${formatCount(row.runs)} runs had finished at the ${row.drainedSeconds.toFixed(0)} s cap; its rates count those.`,
      );
    }
  }
  parts.push(
    `Every instance, the load generator, Postgres and Redis share this machine's ${availableParallelism()} cores ("machine cores" near that figure means the machine, not one process, was the limit): more instances add processes, not CPU.`,
  );
  return parts.join(" ");
}
