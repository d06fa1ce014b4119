import { type HistogramSnapshot, LatencyHistogram } from "./latency-histogram.ts";

export interface HttpLoadOptions {
  url: string;
  /** When given, requests go round-robin over these instead of `url` (several instances). */
  urls?: string[];
  method: string;
  headers?: Record<string, string>;
  body?: string;
  /** Requests in flight at once (one keep-alive connection each). */
  concurrency: number;
  /** Stop starting requests after this long… */
  durationMs?: number;
  /** …or after this many (whichever comes first; at least one of the two). */
  totalRequests?: number;
}

export interface HttpLoadResult {
  requests: number;
  /** 2xx answers. */
  ok: number;
  non2xx: number;
  errors: number;
  firstError: string | null;
  elapsedMs: number;
  latency: HistogramSnapshot;
}

/** A closed-loop load generator on keep-alive fetch: `concurrency` workers, each one request at a time. */
export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  if (options.durationMs === undefined && options.totalRequests === undefined) {
    throw new Error("give durationMs or totalRequests");
  }
  const latency = new LatencyHistogram();
  const startedAt = performance.now();
  const deadline = startedAt + (options.durationMs ?? Number.POSITIVE_INFINITY);
  const limit = options.totalRequests ?? Number.POSITIVE_INFINITY;
  let started = 0;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let firstError: string | null = null;

  const worker = async () => {
    while (started < limit && performance.now() < deadline) {
      const target = options.urls?.length ? options.urls[started % options.urls.length]! : options.url;
      started++;
      const sentAt = performance.now();
      try {
        const response = await fetch(target, {
          method: options.method,
          headers: options.headers,
          body: options.body,
        });
        await response.arrayBuffer();
        latency.record(performance.now() - sentAt);
        if (response.status >= 200 && response.status < 300) ok++;
        else {
          non2xx++;
          firstError ??= `HTTP ${response.status}`;
        }
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return {
    requests: ok + non2xx + errors,
    ok,
    non2xx,
    errors,
    firstError,
    elapsedMs: performance.now() - startedAt,
    latency: latency.snapshot(),
  };
}
