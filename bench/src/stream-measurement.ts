import { wallClockMs } from "./clock.ts";
import { type HistogramSnapshot, LatencyHistogram } from "./latency-histogram.ts";
import { stampOf } from "./stamped-tokens.ts";

/** What one streamed completion looked like to its reader. */
export interface StreamTiming {
  /** From sending the request to the first token. */
  firstTokenMs: number;
  /** From sending the request to the last token. */
  lastTokenMs: number;
  tokens: number;
  /** Through Promptrun only: from sending the create-run request to its 202, and to `run.started`. */
  acceptedMs?: number;
  runStartedMs?: number;
}

/** Collects the timing of one stream: call start(), then token(delta) per token received. */
export class StreamStopwatch {
  private startedAt = 0;
  private firstAt = 0;
  private lastAt = 0;
  private count = 0;
  private acceptedAt = 0;
  private runStartedAt = 0;

  constructor(private readonly perToken: LatencyHistogram) {}

  start(): void {
    this.startedAt = wallClockMs();
  }

  /** The create-run request was answered. */
  accepted(): void {
    this.acceptedAt = wallClockMs();
  }

  /** `run.started` arrived. */
  runStarted(): void {
    this.runStartedAt = wallClockMs();
  }

  token(delta: string): void {
    const now = wallClockMs();
    if (this.count === 0) this.firstAt = now;
    this.lastAt = now;
    this.count++;
    const stamp = stampOf(delta);
    if (stamp !== null) this.perToken.record(now - stamp);
  }

  get tokens(): number {
    return this.count;
  }

  result(): StreamTiming {
    return {
      firstTokenMs: this.firstAt - this.startedAt,
      lastTokenMs: this.lastAt - this.startedAt,
      tokens: this.count,
      ...(this.acceptedAt ? { acceptedMs: this.acceptedAt - this.startedAt } : {}),
      ...(this.runStartedAt ? { runStartedMs: this.runStartedAt - this.startedAt } : {}),
    };
  }
}

export interface StreamBatchResult {
  timings: StreamTiming[];
  /** Upstream send → reader receive, per token. */
  perToken: HistogramSnapshot;
  errors: number;
  firstError: string | null;
  elapsedMs: number;
}

/**
 * Runs `total` streams with `concurrency` in flight; `stream` does one and returns its timing.
 * With `startSpreadMs`, each worker starts at a random moment within that time (a ramp), so the
 * streams' tokens are not all sent in the same instant.
 */
export async function runStreamBatch(
  concurrency: number,
  total: number,
  stream: (perToken: LatencyHistogram) => Promise<StreamTiming>,
  startSpreadMs = 0,
): Promise<StreamBatchResult> {
  const perToken = new LatencyHistogram();
  const timings: StreamTiming[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let started = 0;
  const startedAt = performance.now();
  const worker = async () => {
    // The worker claims its first stream before it waits, so no other worker starts it early.
    let delayMs = Math.random() * startSpreadMs;
    while (started < total) {
      started++;
      if (delayMs > 0) await Bun.sleep(delayMs);
      delayMs = 0;
      try {
        timings.push(await stream(perToken));
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return {
    timings,
    perToken: perToken.snapshot(),
    errors,
    firstError,
    elapsedMs: performance.now() - startedAt,
  };
}
