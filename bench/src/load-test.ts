import { LatencyHistogram } from "./latency-histogram.ts";
import { runLoadGeneratorProcess } from "./load-generator-process.ts";
import { runWrk, type WrkRequest, wrkAvailable } from "./wrk.ts";

export interface LoadTestOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  request?: WrkRequest;
  scratchDir: string;
}

export interface LoadTestResult {
  tool: "wrk" | "bun";
  requestsPerSecond: number;
  totalRequests: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx/3xx answers and socket errors. */
  failures: number;
  /** CPU seconds used by the load generator. */
  generatorCpuSeconds: number;
  durationSeconds: number;
}

/**
 * A fixed-duration closed-loop load test from a separate process: wrk when installed (lighter
 * on a 2-core machine), else the Bun keep-alive fetch generator.
 */
export async function loadTest(options: LoadTestOptions): Promise<LoadTestResult> {
  if (wrkAvailable()) {
    const result = await runWrk({
      url: options.url,
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      scratchDir: options.scratchDir,
      ...(options.request ? { request: options.request } : {}),
    });
    return {
      tool: "wrk",
      requestsPerSecond: result.requestsPerSecond,
      totalRequests: result.totalRequests,
      p50Ms: result.latencyMs.p50,
      p99Ms: result.latencyMs.p99,
      failures: result.non2xx + result.socketErrors,
      generatorCpuSeconds: result.cpuSeconds,
      durationSeconds: result.durationSeconds,
    };
  }
  const result = await runLoadGeneratorProcess({
    url: options.url,
    method: options.request?.method ?? "GET",
    concurrency: options.connections,
    durationMs: options.durationSeconds * 1000,
    ...(options.request?.headers ? { headers: options.request.headers } : {}),
    ...(options.request?.body !== undefined ? { body: options.request.body } : {}),
  });
  const latency = LatencyHistogram.from(result.latency);
  return {
    tool: "bun",
    requestsPerSecond: result.requests / (result.elapsedMs / 1000),
    totalRequests: result.requests,
    p50Ms: latency.percentile(50),
    p99Ms: latency.percentile(99),
    failures: result.non2xx + result.errors,
    generatorCpuSeconds: result.cpuSeconds,
    durationSeconds: result.elapsedMs / 1000,
  };
}
