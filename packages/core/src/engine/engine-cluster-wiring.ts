import type { PromptrunConfig } from "../config.ts";
import type { Clock, RunRecord, Store } from "../ports.ts";
import {
  type ClusterCoordinator,
  createClusterCoordinator,
  type EngineCluster,
} from "./cluster-coordinator.ts";
import type { RunLauncher } from "./run-launcher.ts";

export interface EngineClusterWiring {
  store: Store;
  clock: Clock;
  config: PromptrunConfig;
  cluster: EngineCluster;
  logError(message: string, error: unknown): void;
  /** The shared queue's latest frontier, for the local queue. */
  takeFrontier(runs: RunRecord[]): void;
  /** The engine's launcher (late-bound: it is built with this coordinator). */
  launcher(): RunLauncher;
}

/** The cluster coordinator, its notices turned into the engine's actions on local executions. */
export function wireEngineCluster(wiring: EngineClusterWiring): ClusterCoordinator {
  const { config } = wiring;
  return createClusterCoordinator({
    store: wiring.store,
    clock: wiring.clock,
    cluster: wiring.cluster,
    tenantLimit: config.tenantConcurrency,
    pollLimit: Math.max(16, config.concurrency),
    onClaimable: (runs) => wiring.takeFrontier(runs),
    // Taken over elsewhere: stop here without ending it (the new owner finishes it).
    onLeaseLost: (runId) => wiring.launcher().interrupt(runId),
    onCancelRequested: (runId) => {
      const execution = wiring.launcher().get(runId);
      if (execution) wiring.launcher().requestCancel(execution);
    },
    logError: wiring.logError,
  });
}
