import type { RunEngine } from "../engine-port.ts";
import type { Clock, RunRecord, Store } from "../ports.ts";

export interface RecordingEngine extends RunEngine {
  readonly enqueued: Array<{ run: RunRecord; envVars: Record<string, string> | undefined }>;
  readonly cancelled: string[];
  /** Runs resumed after their tool outputs were stored. */
  readonly resumed: RunRecord[];
  readonly started: boolean;
}

/**
 * A RunEngine that executes nothing and records what it was asked. Given a store, cancel()
 * fails the run with "cancelled" the way the real engine does.
 */
export function recordingEngine(options: { store?: Store; clock?: Clock } = {}): RecordingEngine {
  const enqueued: RecordingEngine["enqueued"] = [];
  const cancelled: string[] = [];
  const resumed: RunRecord[] = [];
  let started = false;
  return {
    enqueued,
    cancelled,
    resumed,
    get started() {
      return started;
    },
    async start() {
      started = true;
    },
    async stop() {
      started = false;
    },
    enqueue(run, envVars) {
      enqueued.push({ run, envVars });
    },
    resume(run) {
      resumed.push(run);
    },
    async cancel(runId) {
      cancelled.push(runId);
      if (!options.store) return false;
      return options.store.runs.fail(runId, {
        error: "cancelled",
        cost: null,
        finishedAt: options.clock?.now() ?? new Date(),
        deliveries: [],
      });
    },
    stats() {
      const queued = { onsite: 0, normal: 0, low: 0 };
      for (const { run } of enqueued) queued[run.priority]++;
      return { queued, executing: 0, queuedInMemory: enqueued.length };
    },
  };
}
