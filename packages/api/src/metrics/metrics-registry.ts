import type { EngineMetrics } from "@promptrun/core";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Metrics the HTTP app, the SSE handler and the engine report into; exposed at GET /metrics. */
export interface ApiMetrics {
  /** One answered HTTP request; `route` is the route template (`/api/v1/promptruns/:id`), never the raw path. */
  httpRequest(labels: { method: string; route: string; status: number }, durationSeconds: number): void;
  /** An SSE stream was opened (call streamClosed exactly once when it ends). */
  streamOpened(): void;
  streamClosed(): void;
  /** Hooks for the run engine (pass to createPromptrun). */
  readonly engine: EngineMetrics;
  /** Prometheus text exposition of every metric above. */
  text(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsRegistryOptions {
  /** Adds prom-client's process metrics (CPU, memory, file descriptors). Off by default: tests need no timers. */
  processMetrics?: boolean;
}

/**
 * prom-client's gauges named `*_total` (the sum of the by-type gauge beside each): `promtool check
 * metrics` refuses a non-counter with that suffix, so they are not exposed; `sum()` of the by-type
 * gauge gives the same number.
 */
export const DROPPED_DEFAULT_METRICS = [
  "promptrun_nodejs_active_handles_total",
  "promptrun_nodejs_active_requests_total",
  "promptrun_nodejs_active_resources_total",
] as const;

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** A fresh prom-client registry (never the global one, so several apps in one process do not collide). */
// long-function: a flat list of metric declarations, each exposed name written once and read top to bottom.
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): ApiMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics) {
    collectDefaultMetrics({ register: registry, prefix: "promptrun_" });
    for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }

  const httpRequests = new Counter({
    name: "promptrun_http_requests_total",
    help: "HTTP requests answered, by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: "promptrun_http_request_duration_seconds",
    help: "Time to the response headers, by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const openStreams = new Gauge({
    name: "promptrun_sse_open_streams",
    help: "SSE streams currently open.",
    registers,
  });
  const runsFinished = new Counter({
    name: "promptrun_runs_finished_total",
    help: "Runs that ended, by outcome and model.",
    labelNames: ["outcome", "model"] as const,
    registers,
  });
  const runDuration = new Histogram({
    name: "promptrun_run_duration_seconds",
    help: "Run duration from creation to end, by outcome and model.",
    labelNames: ["outcome", "model"] as const,
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const providerCalls = new Counter({
    name: "promptrun_provider_calls_total",
    help: "Model provider calls (attempts), by model and outcome.",
    labelNames: ["model", "outcome"] as const,
    registers,
  });
  const providerLatency = new Histogram({
    name: "promptrun_provider_call_duration_seconds",
    help: "Model provider call duration, by model and outcome.",
    labelNames: ["model", "outcome"] as const,
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const queueDepth = new Gauge({
    name: "promptrun_queue_depth",
    help: "Runs waiting to execute, by priority class.",
    labelNames: ["priority"] as const,
    registers,
  });

  const httpChildren = new Map<
    string,
    { count: ReturnType<typeof httpRequests.labels>; duration: ReturnType<typeof httpDuration.labels> }
  >();
  // Labelled children are kept per (outcome, model): prom-client hashes a label object on every
  // call otherwise, and these run once or twice per run. They live as long as the series do.
  const runChildren = new Map<
    string,
    { count: ReturnType<typeof runsFinished.labels>; duration: ReturnType<typeof runDuration.labels> }
  >();
  const providerChildren = new Map<
    string,
    { count: ReturnType<typeof providerCalls.labels>; latency: ReturnType<typeof providerLatency.labels> }
  >();

  const engine: EngineMetrics = {
    runFinished(outcome, model, durationMs) {
      const key = `${outcome}\u0000${model}`;
      let children = runChildren.get(key);
      if (children === undefined) {
        children = {
          count: runsFinished.labels({ outcome, model }),
          duration: runDuration.labels({ outcome, model }),
        };
        runChildren.set(key, children);
      }
      children.count.inc();
      children.duration.observe(durationMs / 1000);
    },
    providerCall(model, outcome, latencyMs) {
      const key = `${outcome}\u0000${model}`;
      let children = providerChildren.get(key);
      if (children === undefined) {
        children = {
          count: providerCalls.labels({ model, outcome }),
          latency: providerLatency.labels({ model, outcome }),
        };
        providerChildren.set(key, children);
      }
      children.count.inc();
      children.latency.observe(latencyMs / 1000);
    },
    queueDepth(depthByPriority) {
      for (const [priority, depth] of Object.entries(depthByPriority)) queueDepth.set({ priority }, depth);
    },
  };

  return {
    httpRequest({ method, route, status }, durationSeconds) {
      // Label sets are few (methods × route patterns × statuses): the labelled children are kept,
      // so a request does not hash its labels twice.
      const key = `${method} ${route} ${status}`;
      let children = httpChildren.get(key);
      if (children === undefined) {
        const labels = { method, route, status: String(status) };
        children = { count: httpRequests.labels(labels), duration: httpDuration.labels(labels) };
        httpChildren.set(key, children);
      }
      children.count.inc();
      children.duration.observe(durationSeconds);
    },
    streamOpened: () => openStreams.inc(),
    streamClosed: () => openStreams.dec(),
    engine,
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
