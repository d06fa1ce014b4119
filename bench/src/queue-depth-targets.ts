/** Issue #24's target 5 (memory and cost flat with queue depth), checked against figures of one run. */
import { formatCount, formatMs } from "./format.ts";
import type { TargetCheck } from "./sections/bench-context.ts";

/** What one queue depth measured, for the targets. */
export interface DepthFigures {
  /** Pending runs. */
  depth: number;
  /** Server VmRSS (KiB) with those runs pending. */
  rssKb: number;
  /** From spawning the server to it answering with the queue loaded. */
  restartSeconds: number;
  /** Create-run through the API at that depth. */
  createPerSecond: number;
  createP99Ms: number;
  /** Server CPU ms per completed run over the cost window (median). */
  dequeueCpuMs: number;
}

const BYTES_PER_KIB = 1024;
const BYTES_PER_MB = 1_000_000;

/** Server memory each further pending run costs: the RSS difference over the depth difference, in bytes. */
export function bytesPerPendingRun(
  shallow: Pick<DepthFigures, "depth" | "rssKb">,
  deep: Pick<DepthFigures, "depth" | "rssKb">,
): number {
  return ((deep.rssKb - shallow.rssKb) * BYTES_PER_KIB) / (deep.depth - shallow.depth);
}

/** RSS in MB (10^6 bytes), as the target states it. */
export const rssMegabytes = (rssKb: number) => (rssKb * BYTES_PER_KIB) / BYTES_PER_MB;

/** A ratio as "×1.04"; "n/a" when a figure is missing. */
const times = (ratio: number) => (Number.isFinite(ratio) ? `×${ratio.toFixed(2)}` : "n/a");

/**
 * Target 5: the deepest queue against the shallowest (the "empty queue"). "Within 10 %" means no
 * worse by more than 10 %: faster create-runs or a cheaper dequeue at depth pass.
 */
export function flatMemoryTargets(shallow: DepthFigures, deep: DepthFigures): TargetCheck[] {
  const perRun = bytesPerPendingRun(shallow, deep);
  const megabytes = rssMegabytes(deep.rssKb);
  const throughput = deep.createPerSecond / shallow.createPerSecond;
  const latency = deep.createP99Ms / shallow.createP99Ms;
  const dequeue = deep.dequeueCpuMs / shallow.dequeueCpuMs;
  const pending = formatCount(deep.depth);
  return [
    {
      target: `≤ 100 bytes of server memory per pending run (RSS ${formatCount(shallow.depth)}→${pending} pending)`,
      measured: `${formatCount(perRun)} bytes`,
      met: perRun <= 100,
    },
    {
      target: `${pending} pending runs: server RSS < 400 MB`,
      measured: `${formatCount(megabytes)} MB`,
      met: megabytes < 400,
    },
    {
      target: `${pending} pending runs: restart to ready (queue loaded) < 15 s`,
      measured: `${deep.restartSeconds.toFixed(1)} s`,
      met: deep.restartSeconds < 15,
    },
    {
      target: `${pending} pending runs: create-run req/s ≥ 90 % and p99 ≤ 110 % of ${formatCount(shallow.depth)} pending's (median of the probes)`,
      measured: `${formatCount(deep.createPerSecond)} vs ${formatCount(shallow.createPerSecond)} req/s (${times(throughput)}), p99 ${formatMs(deep.createP99Ms)} vs ${formatMs(shallow.createP99Ms)} ms (${times(latency)})`,
      met: throughput >= 0.9 && latency <= 1.1,
    },
    {
      target: `${pending} pending runs: dequeue cost ≤ 110 % of ${formatCount(shallow.depth)} pending's (server CPU per run over the cost window, median)`,
      measured: `${formatMs(deep.dequeueCpuMs)} vs ${formatMs(shallow.dequeueCpuMs)} ms per run (${times(dequeue)})`,
      met: dequeue <= 1.1,
    },
  ];
}
