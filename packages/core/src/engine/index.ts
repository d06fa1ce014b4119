export type { EngineCluster } from "./cluster-coordinator.ts";
export { createEngine } from "./engine.ts";
export { RunScheduler } from "./scheduler.ts";
