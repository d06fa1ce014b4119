import { rmSync } from "node:fs";
import { RunScheduler } from "@promptrun/core";
import { benchPrompts } from "../bench-prompts.ts";
import { engineStats, openGate, pollUntil } from "../bench-server.ts";
import { formatCores, formatCount, formatMs } from "../format.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { runLoadGeneratorProcess } from "../load-generator-process.ts";
import { markdownTable } from "../markdown-table.ts";
import { preciseCpuReader } from "../precise-cpu.ts";
import { readRssKb, startCpuWindow } from "../process-stats.ts";
import { startPromptrunServer } from "../promptrun-server.ts";
import { type DepthFigures, flatMemoryTargets, rssMegabytes } from "../queue-depth-targets.ts";
import { copyQueue, removeQueue, type SeededQueue, seedQueue } from "../seeded-queue.ts";
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
/** Times each depth is measured (each time on a fresh copy of its queue). */
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
  /** From spawning the server to it answering with the held runs executing and the rest queued. */
  startSeconds: number;
  /** Server VmRSS (KiB) just before the release, with `depth` runs pending. */
  rssKb: number;
  /** Whether the drain ran to the end (else it stopped after the cost window). */
  fullDrain: boolean;
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

interface MeasureOptions {
  drainLimitMs: number;
  /** Stops polling once this many runs have completed (a measurement that only needs the cost window). */
  stopAfterCompleted: number;
}

/** Starts a server on a copy of the queue, warms it up, times create-run at depth, then drains it. */
async function measureDepth(
  context: BenchContext,
  queue: SeededQueue,
  depth: number,
  options: MeasureOptions,
): Promise<DepthResult> {
  const echoRuns = depth - SLOTS - PROBE_RUNS;
  const reuse = copyQueue(queue);
  await fetch(`${context.upstream.url}/control/close-gate`, { method: "POST" });
  // The server prints its ready line once the engine has loaded the pending runs: today that
  // takes ~40 s at a million runs, so the wait grows with the depth.
  const readyTimeoutMs = 60_000 + depth / 10;
  const startStarted = performance.now();
  const server = await startPromptrunServer({
    reuse,
    readyTimeoutMs,
    env: {
      PROMPTRUN_PROVIDERS: `bench=${context.upstream.url}/v1`,
      // The demo tenant's queue drains through its SLOTS; the other SLOTS serve the warm-up tenant.
      PROMPTRUN_CONCURRENCY: String(2 * SLOTS),
      PROMPTRUN_TENANT_CONCURRENCY: String(SLOTS),
    },
  }).catch((error: unknown) => {
    // A server that never started leaves its copy (up to ~1 GB) behind otherwise.
    rmSync(reuse.dataDir, { recursive: true, force: true });
    throw error;
  });
  try {
    const parkedAndQueued = async () => {
      const stats = await engineStats(server);
      return stats.executing === SLOTS && stats.queued === echoRuns;
    };
    if (!(await pollUntil(parkedAndQueued, readyTimeoutMs))) {
      throw new Error(`queue not loaded: ${JSON.stringify(await engineStats(server))}`);
    }
    const startSeconds = (performance.now() - startStarted) / 1000;

    await runLoadGeneratorProcess({
      url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${queue.warmUpApiKey}` },
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
    const rssKb = readRssKb(server.pid);
    const { samples, cpu } = await drain(
      context,
      server.pid,
      () => engineStats(server),
      depth - SLOTS,
      options,
    );
    const last = samples[samples.length - 1]!;
    return {
      depth,
      startSeconds,
      rssKb,
      fullDrain: options.stopAfterCompleted === Number.POSITIVE_INFINITY,
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
      drainCores: cpu.cpuSeconds / cpu.wallSeconds,
      cpuMsPerRun: (cpu.cpuSeconds * 1000) / last.completed,
      windowCpuMsPerRun: cpuMsPerRunBetween(samples, COST_WINDOW.from, COST_WINDOW.to),
      cpuMsPerRunByTenth: Array.from({ length: 10 }, (_, tenth) =>
        cpuMsPerRunBetween(samples, (last.completed * tenth) / 10, (last.completed * (tenth + 1)) / 10),
      ),
    };
  } finally {
    await server.dispose(3_000);
  }
}

/**
 * Releases the held runs and polls the queue as it drains (the queue at release: `queuedRuns`),
 * until it is empty, `stopAfterCompleted` runs have completed or the time limit.
 */
async function drain(
  context: BenchContext,
  pid: number,
  stats: () => ReturnType<typeof engineStats>,
  queuedRuns: number,
  options: MeasureOptions,
): Promise<{ samples: DrainSample[]; cpu: { cpuSeconds: number; wallSeconds: number } }> {
  const samples: DrainSample[] = [];
  const openedAt = performance.now();
  const stopCpu = startCpuWindow([pid]);
  const readCpuSeconds = preciseCpuReader(pid);
  await openGate(context.upstream.url);
  for (;;) {
    const { queued, executing } = await stats();
    const completed = queuedRuns - queued - Math.max(0, executing);
    samples.push({ at: performance.now() - openedAt, completed, cpuSeconds: readCpuSeconds() });
    const drained = queued === 0 && executing === 0;
    if (
      drained ||
      completed >= options.stopAfterCompleted ||
      performance.now() - openedAt > options.drainLimitMs
    )
      break;
    await Bun.sleep(50);
  }
  const window = stopCpu();
  return {
    samples,
    cpu: { cpuSeconds: window.cpuSeconds[pid] ?? Number.NaN, wallSeconds: window.wallSeconds },
  };
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

/** Each depth's readings: the first (with the full drain up to FULL_DRAIN_UP_TO), then the repeats'. */
type Readings = Map<number, DepthResult[]>;

/**
 * Builds each depth's queue once, then measures every depth COST_REPEATS times on copies of it.
 * One cost window is ~800 runs, a few hundred ms of CPU: a GC pause or a busy neighbour core moves
 * it by ~10 %, so the rounds interleave the depths (spreading any drift over all of them) and the
 * targets compare medians.
 */
async function measureDepths(
  context: BenchContext,
  depths: number[],
  options: { drainLimitMs: number; fullDrainUpTo: number },
): Promise<{ readings: Readings; seedSeconds: Map<number, number> }> {
  const queues = new Map<number, SeededQueue>();
  const readings: Readings = new Map(depths.map((depth) => [depth, []]));
  try {
    for (const depth of depths) {
      context.log(`queue: writing ${formatCount(depth)} pending runs`);
      queues.set(
        depth,
        await seedQueue({
          promptsDir: context.promptsDir,
          upstreamUrl: context.upstream.url,
          heldRuns: SLOTS,
          echoRuns: depth - SLOTS - PROBE_RUNS,
        }),
      );
    }
    for (let round = 0; round < COST_REPEATS; round++) {
      for (const depth of depths) {
        const fullDrain = round === 0 && depth <= options.fullDrainUpTo;
        context.log(
          `queue: depth ${depth}, ${fullDrain ? "full drain" : "cost window"} (${round + 1} of ${COST_REPEATS})`,
        );
        const result = await measureDepth(context, queues.get(depth)!, depth, {
          drainLimitMs: options.drainLimitMs,
          stopAfterCompleted: fullDrain ? Number.POSITIVE_INFINITY : COST_WINDOW.to + 100,
        });
        readings.get(depth)!.push(result);
      }
    }
  } finally {
    for (const queue of queues.values()) removeQueue(queue);
  }
  return { readings, seedSeconds: new Map([...queues].map(([depth, queue]) => [depth, queue.seedSeconds])) };
}

/** The medians over a depth's readings that the targets compare. */
function depthFigures(depth: number, readings: DepthResult[]): DepthFigures {
  const medianOf = (value: (result: DepthResult) => number) => median(readings.map(value));
  return {
    depth,
    rssKb: medianOf((result) => result.rssKb),
    restartSeconds: medianOf((result) => result.startSeconds),
    createPerSecond: medianOf((result) => result.probe.requestsPerSecond),
    createP99Ms: medianOf((result) => result.probe.p99),
    dequeueCpuMs: medianOf((result) => result.windowCpuMsPerRun),
  };
}

/** One table row: the depth's medians, then its first reading's drain. */
function depthRow(readings: DepthResult[], seedSeconds: number, schedulerNanoseconds: number) {
  const first = readings[0]!;
  const figures = depthFigures(first.depth, readings);
  const each = (value: (result: DepthResult) => string) => readings.map(value).join(", ");
  const failures = readings.reduce((sum, result) => sum + result.probe.failures, 0);
  const wholeDrain = (text: string) => (first.fullDrain ? text : "—");
  return [
    formatCount(first.depth),
    `${seedSeconds.toFixed(1)} s`,
    `${figures.restartSeconds.toFixed(1)} s (${each((result) => result.startSeconds.toFixed(1))})`,
    `${formatCount(rssMegabytes(figures.rssKb))} MB`,
    `${formatCount(figures.createPerSecond)} (p50 ${formatMs(median(readings.map((result) => result.probe.p50)))}, p99 ${formatMs(figures.createP99Ms)} ms${failures ? `, ${failures} failed` : ""})`,
    first.fullDrain
      ? `${formatCount(first.drained)} in ${first.drainSeconds.toFixed(1)} s (server ${formatCores(first.drainCores)} cores)`
      : `stopped after ${formatCount(first.drained)} in ${first.drainSeconds.toFixed(1)} s`,
    `${formatMs(figures.dequeueCpuMs)} (${each((result) => formatMs(result.windowCpuMsPerRun))})`,
    wholeDrain(formatMs(first.cpuMsPerRun)),
    formatCount(first.rateFirstThousand),
    wholeDrain(formatCount(first.rate)),
    wholeDrain(`${formatCount(first.rateEarly)} / ${formatCount(first.rateLate)}`),
    `${formatCount(schedulerNanoseconds)} ns`,
  ];
}

/** The dequeue-flatness target of the first round, over the depths it named (up to 100,000). */
function flatDequeueTarget(figures: DepthFigures[]): TargetCheck {
  const flat = figures.filter((entry) => entry.depth <= 100_000);
  const costs = flat.map((entry) => entry.dequeueCpuMs);
  const growth = Math.max(...costs) / Math.min(...costs);
  return {
    target: `dequeue cost flat ${formatCount(flat[0]!.depth)}→${formatCount(flat[flat.length - 1]!.depth)} (server CPU per completed run over completions ${COST_WINDOW.from}–${COST_WINDOW.to} of the drain, largest/smallest ≤ 1.25)`,
    measured: `×${growth.toFixed(2)} (${costs.map((cost) => formatMs(cost)).join(" / ")} ms per run)`,
    met: growth <= 1.25,
  };
}

/** 4. End-to-end completed dev:echo runs per second, and how draining, memory and restart scale with queue depth. */
export async function queueSection(context: BenchContext): Promise<SectionResult> {
  const depths = context.quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000, 1_000_000];
  const drainLimitMs = context.quick ? 20_000 : 45_000;
  // Deeper queues are measured over the cost window only: draining 1,000,000 runs would take minutes.
  const fullDrainUpTo = context.quick ? 10_000 : 100_000;
  const { readings, seedSeconds } = await measureDepths(context, depths, { drainLimitMs, fullDrainUpTo });
  // Warm the JIT once, then measure.
  schedulerCost(1_000, 20_000);
  const rows = depths.map((depth) =>
    depthRow(readings.get(depth)!, seedSeconds.get(depth)!, schedulerCost(depth, 200_000)),
  );
  const figures = depths.map((depth) => depthFigures(depth, readings.get(depth)!));
  const fullDrains = depths.map((depth) => readings.get(depth)![0]!).filter((result) => result.fullDrain);
  const targets: TargetCheck[] = [
    flatDequeueTarget(figures),
    ...flatMemoryTargets(figures[0]!, figures[figures.length - 1]!),
  ];
  const body = [
    methodText(drainLimitMs, fullDrainUpTo),
    "",
    markdownTable(
      [
        "pending runs",
        "seed (store)",
        "restart to ready, queue loaded: median (each)",
        "server RSS before the release: median",
        "create-run at that depth: req/s, median of the probes",
        "drained (first reading)",
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
    "Server CPU ms per run over each tenth of the drain, from the deepest queue to the nearly empty one (each full drain of 10,000 runs or more: the same queue as it shrinks):",
    "",
    ...fullDrains
      // A tenth of the smallest drain is ~100 runs: too few for a CPU reading worth showing.
      .filter((result) => result.depth >= 10_000)
      .map(
        (result) =>
          `- ${formatCount(result.depth)} pending: ${result.cpuMsPerRunByTenth.map((cost) => formatMs(cost)).join(" · ")}`,
      ),
    "",
    `End-to-end completed dev:echo runs per second (queue drain, no concurrent creates): ${fullDrains.map((result) => `${formatCount(result.rate)} at depth ${formatCount(result.depth)}`).join(", ")}.`,
  ].join("\n");
  return { title: "4. Completed runs per second and queue depth", body, targets };
}

function methodText(drainLimitMs: number, fullDrainUpTo: number): string {
  return (
    `Each measurement uses a fresh server (concurrency ${2 * SLOTS}, per tenant ${SLOTS}). The pending runs are written once per depth through the store port (\`@promptrun/db\`, the same group-committed \`runs.create\` the API uses, 4,096 in flight and per commit) with the server stopped: ${SLOTS} runs of a prompt whose upstream holds them, then the dev:echo runs; each measurement starts on a copy of that database. ` +
    `On start the engine reloads them (the crash-recovery path): the ${SLOTS} held runs take every slot of the demo tenant and the rest stays queued. ` +
    "Restart to ready = from spawning the server to it answering GET /health with the held runs executing and the rest queued (the server prints its ready line only after its engine has loaded the pending runs). " +
    `A second tenant then executes ${formatCount(WARM_UP_RUNS)} dev:echo runs on the other ${SLOTS} slots so that the drain is measured warm. ` +
    `Then ${PROBE_RUNS} more runs are created through the API (16 connections, Bun load generator) to time create-run against that queue, so the depth is the number of pending runs; server RSS = VmRSS (/proc/<pid>/status) right after, with all of them pending, just before the release. ` +
    `Releasing the held runs starts the drain; GET /health is polled every 50 ms (completed = queued at release − queued − executing), for at most ${drainLimitMs / 1000} s. ` +
    `Server CPU per run = CPU seconds of the server / runs completed: over completions ${COST_WINDOW.from} to ${COST_WINDOW.to} after the release (the dequeue targets use it), the same ${COST_WINDOW.to - COST_WINDOW.from} runs at every depth, read from the scheduler's nanosecond counters (/proc/<pid>/task/*/schedstat, a thread that ends keeping its last reading) at each poll and interpolated to those completions, so the gate release before it and the idle slots at the end of the smallest drain stay out; and over the whole drain. ` +
    `Each depth is measured ${COST_REPEATS} times, each on a fresh copy of its queue, the depths interleaved: the first reading of each depth up to ${formatCount(fullDrainUpTo)} drains the whole queue, every other one (and every reading of a deeper queue) stops after ${formatCount(COST_WINDOW.to + 100)} completions. Restart, RSS, create-run and the cost window are the medians of the ${COST_REPEATS} readings. ` +
    'Memory per pending run = (RSS at the deepest queue − RSS at the smallest) / (the difference in pending runs); the smallest depth is the target\'s "empty queue" reference for create-run and dequeue cost, and "within 10 %" means no worse by more than 10 % (faster is within). MB = 10^6 bytes. ' +
    `Window runs/s = completions per second over the same completions ${COST_WINDOW.from} to ${COST_WINDOW.to}. ` +
    "Drain rate = completions per second between 10 % and 90 % of what completed in a full drain; early/late = 10–30 % vs 70–90 % of it (a deep queue vs the same queue further drained). " +
    "The scheduler column times `RunScheduler` alone in this process: take the next run, finish it, enqueue one, at a constant depth."
  );
}
