import type { RunRecord } from "./ports.ts";

/** What the services need from the run engine (./engine). */
export interface RunEngine {
  /** Loads every pending run from the store and starts executing. */
  start(): Promise<void>;
  /** Stops taking runs; waits up to `graceMs` for in-flight ones, then aborts them (they stay pending and resume on the next start). */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** Called after a run is durably committed. `envVars` are the run's plaintext overrides (kept in memory only). */
  enqueue(run: RunRecord, envVars?: Record<string, string>): void;
  /**
   * A paused run was resumed in the store (its tool outputs are in its steps): it executes again,
   * first in its channel. Called after the store's resume committed.
   */
  resume(run: RunRecord): void;
  /** Aborts a queued, executing or paused run; resolves true if this call ended it. */
  cancel(runId: string): Promise<boolean>;
  /**
   * Queued runs per class (those waiting in the store included), executing runs, and how many of
   * the queued ones are held in memory (docs/ARCHITECTURE.md "Pending runs in memory").
   */
  stats(): { queued: Record<"onsite" | "normal" | "low", number>; executing: number; queuedInMemory: number };
}
