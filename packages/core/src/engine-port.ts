import type { RunRecord } from "./ports.ts";

/** What the services need from the run engine (./engine). */
export interface RunEngine {
  /** Loads every pending run from the store and starts executing. */
  start(): Promise<void>;
  /** Stops taking runs; waits up to `graceMs` for in-flight ones, then aborts them (they stay pending and resume on the next start). */
  stop(options?: { graceMs?: number }): Promise<void>;
  /**
   * Hands over an accepted run. `envVars` are its plaintext overrides (kept in memory only).
   * `durable` is its insert when that has not committed yet: a run that can start at once then
   * starts before the commit lands, so the provider's time to first token overlaps the commit's
   * fsync; nothing of it is published or written before `durable` resolves, and it is dropped
   * without a trace if `durable` rejects. Without `durable` the run must be committed already.
   */
  enqueue(run: RunRecord, envVars?: Record<string, string>, durable?: Promise<unknown>): void;
  /** Aborts a queued or executing run; resolves true if this call ended it. */
  cancel(runId: string): Promise<boolean>;
  stats(): { queued: Record<"onsite" | "normal" | "low", number>; executing: number };
}
