export type { AttemptFailure, FailureReason } from "./attempt-failure.ts";
export type { EngineCluster } from "./cluster-coordinator.ts";
export { createEngine, type EngineDeps } from "./engine.ts";
export { RunScheduler, type ScheduledRun, type SchedulerOptions, type SchedulerStats } from "./scheduler.ts";
