/** Issue #24's create-run targets (1, and the cores part of 2), checked against figures of one run. */
import { formatCores, formatMs, formatPercent } from "./format.ts";
import type { TargetCheck } from "./sections/bench-context.ts";

/** What a target compares for one row: throughput, tail latency and the server's CPU per request. */
export interface CreateFigures {
  requestsPerSecond: number;
  p99Ms: number;
  cpuMicrosecondsPerRequest: number;
}

/** Server CPU microseconds per request it answered successfully (NaN when it answered none). */
export function cpuMicrosecondsPerRequest(cpuSeconds: number, accepted: number): number {
  return accepted > 0 ? (cpuSeconds * 1e6) / accepted : Number.NaN;
}

/** Microseconds with three significant figures, like the report's milliseconds. */
export const formatMicroseconds = formatMs;

/** Target 1: create-run at 100 connections against the durable-insert floor measured in the same run. */
export function durableFloorTargets(create: CreateFigures, floor: CreateFigures): TargetCheck[] {
  const throughput = create.requestsPerSecond / floor.requestsPerSecond;
  const latency = create.p99Ms / floor.p99Ms;
  const cpu = create.cpuMicrosecondsPerRequest / floor.cpuMicrosecondsPerRequest;
  return [
    {
      target: "create-run at 100 connections ≥ 70 % of the durable-insert floor's req/s",
      measured: formatPercent(throughput),
      met: throughput >= 0.7,
    },
    {
      target: "create-run at 100 connections p99 ≤ 2 × the durable-insert floor's p99",
      measured: `${formatMs(create.p99Ms)} vs ${formatMs(floor.p99Ms)} ms (×${latency.toFixed(2)})`,
      met: latency <= 2,
    },
    {
      target: "server CPU per accepted run at 100 connections ≤ 1.5 × the durable-insert floor's",
      measured: `${formatMicroseconds(create.cpuMicrosecondsPerRequest)} vs ${formatMicroseconds(floor.cpuMicrosecondsPerRequest)} µs (×${cpu.toFixed(2)})`,
      met: cpu <= 1.5,
    },
  ];
}

/**
 * Target 2 for create-run: the server's processes use ≥ 1.5 cores at 100 connections, and req/s on
 * all cores reach ≥ 1.6 × the same build on one thread. The server has no multi-core mode yet: it
 * is one thread, so the second part is ×1.00, not met.
 */
export function multiCoreTargets(serverCores: number): TargetCheck[] {
  return [
    {
      target:
        "create-run at 100 connections: the server's processes together use ≥ 1.5 cores (2-core machine)",
      measured: `${formatCores(serverCores)} cores`,
      met: serverCores >= 1.5,
    },
    {
      target: "create-run req/s on all cores ≥ 1.6 × the same build on one thread",
      measured: "one thread only (no multi-core mode): ×1.00",
      met: false,
    },
  ];
}
