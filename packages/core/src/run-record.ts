import type { NewRun, RunRecord } from "./ports.ts";

/** A new run as every store holds it after its insert: pending, nothing started or ended yet. */
export const pendingRunRecord = (run: NewRun): RunRecord => ({
  ...run,
  status: "pending",
  startedAt: null,
  finishedAt: null,
  output: null,
  error: null,
  tokenUsage: null,
  cost: null,
  attempts: 0,
  outputJson: null,
  finishReason: null,
  memoryWindow: null,
  steps: [],
  pause: null,
  retrieval: [],
  citations: [],
});
