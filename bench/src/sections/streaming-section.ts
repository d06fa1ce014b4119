import { benchPrompts } from "../bench-prompts.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { startCpuWindow } from "../process-stats.ts";
import { type CapacitySearch, searchCapacity } from "../stream-capacity.ts";
import { type StreamCpuReading, splitStreamCpu } from "../stream-cpu-cost.ts";
import type { BenchContext, SectionResult } from "./bench-context.ts";
import { measureSetupPhases, type SetupPhases } from "./stream-setup-phases.ts";
import { type BatchShape, type StreamPath, type StreamShape, shapeOf } from "./streaming-paths.ts";
import { type PathResult, type RelayCpu, renderStreaming } from "./streaming-render.ts";
import { PROCESS_OF, type StreamingRig, startStreamingRig } from "./streaming-rig.ts";

const LONG = shapeOf(benchPrompts.stream200);
/** The short stream that separates per-stream from per-token relay cost. */
const SHORT = shapeOf(benchPrompts.stream2);
/** Added per-token p99 under which a level of concurrent streams counts as carried. */
const CAPACITY_LIMIT_MS = 20;
/** Capacity streams start within this time: their tokens are not all sent in the same instant. */
const CAPACITY_START_SPREAD_MS = 1_000;

/** How much each part runs: quick mode keeps the section near a minute (one capacity level); full ≈ 4 minutes. */
export interface StreamingPlan {
  sequentialStreams: number;
  /** Batches of 100 streams at 100 at once. */
  rounds: number;
  /** CPU batches: /proc counts CPU in 10 ms ticks, so a full run's batches cost the bare relay ≥ ~20 (quick: fewer, coarser). */
  cpuLongStreams: number;
  cpuShortStreams: number;
  capacityLevels: number[];
  capacityShape: StreamShape;
  /** Requests of each stream set-up phase measured alone. */
  setupPhaseRequests: number;
}

const streamingPlan = (quick: boolean): StreamingPlan => ({
  sequentialStreams: quick ? 5 : 15,
  rounds: quick ? 1 : 2,
  cpuLongStreams: quick ? 100 : 400,
  cpuShortStreams: quick ? 500 : 2_000,
  // From 25: at 100, Promptrun was already over the limit, which named no number.
  capacityLevels: quick ? [200] : [25, 50, 100, 200, 400, 800, 1_600],
  capacityShape: shapeOf(quick ? benchPrompts.stream50PerSecondQuick : benchPrompts.stream50PerSecond),
  setupPhaseRequests: quick ? 300 : 2_000,
});

/** 2. Streaming overhead: the same stamped upstream read directly, through a bare relay, Portkey and Promptrun. */
export async function streamingSection(context: BenchContext): Promise<SectionResult> {
  const plan = streamingPlan(context.quick);
  const rig = await startStreamingRig(context);
  try {
    // Warm every path (JIT, connection pools) before measuring.
    for (const path of rig.paths) await rig.run(path, { shape: LONG, concurrency: 4, total: 8 });
    const results = await measureLatency(rig, plan, context);
    const cpu = [
      await measureRelayCpu(rig, "bare Bun relay (floor)", plan, context),
      await measureRelayCpu(rig, "Promptrun (SSE)", plan, context),
    ];
    context.log("streaming: Promptrun's stream set-up, each phase alone");
    const setup: SetupPhases = await measureSetupPhases(rig.promptrun, plan.setupPhaseRequests, 50);
    const capacity = await measureCapacity(rig, plan, context);
    return renderStreaming({
      results,
      cpu,
      setup,
      capacity,
      portkey: rig.portkey,
      plan,
    });
  } finally {
    await rig.stop();
  }
}

/** A batch on one path, with the CPU cores each process used meanwhile (CPU seconds / wall seconds). */
async function runWithCores(rig: StreamingRig, path: StreamPath, batch: BatchShape) {
  const stop = startCpuWindow(Object.values(rig.pids));
  const result = await rig.run(path, batch);
  const window = stop();
  const cores = Object.fromEntries(
    Object.entries(rig.pids).map(([name, pid]) => [
      name,
      (window.cpuSeconds[pid] ?? Number.NaN) / window.wallSeconds,
    ]),
  );
  return { batch: result, cores };
}

/** Every path at one stream at a time and at 100 started together, with each process's CPU. */
async function measureLatency(rig: StreamingRig, plan: StreamingPlan, context: BenchContext) {
  const results: PathResult[] = [];
  for (const concurrency of [1, 100]) {
    for (const path of rig.paths) {
      context.log(`streaming: ${path} at ${concurrency} concurrent streams`);
      const total = concurrency === 1 ? plan.sequentialStreams : 100 * plan.rounds;
      const { batch, cores } = await runWithCores(rig, path, { shape: LONG, concurrency, total });
      results.push({ path, concurrency, batch, cores });
    }
  }
  return results;
}

/** What a stream costs the relay's process, apart from latency (which depends on how busy the cores are). */
async function measureRelayCpu(
  rig: StreamingRig,
  path: StreamPath,
  plan: StreamingPlan,
  context: BenchContext,
): Promise<RelayCpu> {
  const pid = rig.pids[PROCESS_OF[path]!]!;
  context.log(`streaming: ${path} CPU per stream, ${LONG.tokens}-token and ${SHORT.tokens}-token streams`);
  const cpuPerStream = async (shape: StreamShape, total: number): Promise<StreamCpuReading> => {
    const stop = startCpuWindow([pid]);
    await rig.run(path, { shape, concurrency: 100, total });
    return { tokens: shape.tokens, msPerStream: ((stop().cpuSeconds[pid] ?? Number.NaN) / total) * 1000 };
  };
  await rig.run(path, { shape: SHORT, concurrency: 100, total: 100 });
  const long = await cpuPerStream(LONG, plan.cpuLongStreams);
  const short = await cpuPerStream(SHORT, plan.cpuShortStreams);
  return { path, long, short, split: splitStreamCpu(long, short) };
}

/** Steps the concurrent 50 tokens/s streams up per relay until added per-token p99 reaches the limit. */
async function measureCapacity(
  rig: StreamingRig,
  plan: StreamingPlan,
  context: BenchContext,
): Promise<CapacitySearch<StreamPath>> {
  const relays = rig.paths.filter((path) => PROCESS_OF[path] !== undefined);
  return searchCapacity({
    levels: plan.capacityLevels,
    relays,
    limitMs: CAPACITY_LIMIT_MS,
    async measure(relay, streams) {
      const path = relay ?? "upstream directly";
      context.log(`streaming: capacity, ${path} at ${streams} streams of 50 tokens/s`);
      const { batch, cores } = await runWithCores(rig, path, {
        shape: plan.capacityShape,
        concurrency: streams,
        total: streams,
        startSpreadMs: CAPACITY_START_SPREAD_MS,
      });
      const perTokenP99Ms = LatencyHistogram.from(batch.perToken).percentile(99);
      return { perTokenP99Ms, errors: batch.errors, cores };
    },
  });
}
