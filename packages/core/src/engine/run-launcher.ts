import type { Store } from "../ports.ts";
import type { ClusterCoordinator } from "./cluster-coordinator.ts";
import type { LaunchableRun } from "./local-queue.ts";
import { type ExecutionOutcome, executeRun, type RunExecutorDeps } from "./run-executor.ts";
import { RunInterruption } from "./run-interruption.ts";

/** not-claimed: another instance holds the run (or its channel's earlier run, or the tenant's slots). */
export type LaunchOutcome = ExecutionOutcome | { kind: "not-claimed" } | null;

export interface Execution {
  controller: AbortController;
  /** Only the first cancel() of a run can be the one that ended it. */
  cancelRequested: boolean;
  done: Promise<LaunchOutcome>;
}

export interface RunLauncherOptions {
  executorDeps: RunExecutorDeps;
  store: Store;
  /** Set with a cluster: runs are leased before they execute. */
  coordinator: ClusterCoordinator | null;
  logError(message: string, error: unknown): void;
  /** An execution is over (whatever its outcome): free its slot, launch what is next. */
  onFinished(runId: string, outcome: LaunchOutcome): void;
}

/** Starts runs and tracks them while they execute: abort for cancel or shutdown, wait for the end. */
export function createRunLauncher(options: RunLauncherOptions) {
  const { coordinator, executorDeps, logError } = options;
  const executions = new Map<string, Execution>();

  /** With a cluster: lease first, then execute the run as the store has it now. */
  const executeLeased = async (
    cluster: ClusterCoordinator,
    { run: queued, envVars }: LaunchableRun,
    signal: AbortSignal,
  ): Promise<LaunchOutcome> => {
    if (!(await cluster.claim(queued.id))) return { kind: "not-claimed" };
    let outcome: LaunchOutcome = null;
    try {
      // Another instance may have started it before dying (attempts, startedAt): read it afresh.
      const run = await options.store.runs.getById(queued.id);
      outcome = run?.status === "pending" ? await executeRun(executorDeps, run, envVars, signal) : null;
      return outcome ?? { kind: "already-ended" };
    } finally {
      if (outcome === null || outcome.kind === "interrupted") {
        await cluster.release(queued.id).catch((error: unknown) => {
          logError(`run ${queued.id}: releasing its lease failed; it lapses instead`, error);
        });
      } else {
        cluster.forget(queued.id);
      }
      // Its channel, and a slot of its tenant, may be free for another instance now.
      cluster.announceWork();
    }
  };

  const execute = (launchable: LaunchableRun, signal: AbortSignal): Promise<LaunchOutcome> =>
    coordinator
      ? executeLeased(coordinator, launchable, signal)
      : executeRun(executorDeps, launchable.run, launchable.envVars, signal);

  const inFlight = () => [...executions.values()].map((execution) => execution.done);

  return {
    isExecuting: (runId: string) => executions.has(runId),
    get: (runId: string) => executions.get(runId),

    launch(launchable: LaunchableRun) {
      const runId = launchable.run.id;
      const controller = new AbortController();
      const done = execute(launchable, controller.signal)
        .catch((error: unknown): LaunchOutcome => {
          logError(`run ${runId} stopped on an unexpected error; it stays pending`, error);
          return null;
        })
        .then((outcome) => {
          executions.delete(runId);
          options.onFinished(runId, outcome);
          return outcome;
        });
      executions.set(runId, { controller, cancelRequested: false, done });
    },

    /** Aborts an execution as a cancel; true when this was the first cancel of it. */
    requestCancel(execution: Execution): boolean {
      const first = !execution.cancelRequested;
      execution.cancelRequested = true;
      execution.controller.abort(new RunInterruption("cancel"));
      return first;
    },

    /** Stops an execution without ending the run (shutdown, or its lease went elsewhere). */
    interrupt(runId: string) {
      executions.get(runId)?.controller.abort(new RunInterruption("stop"));
    },

    /** Waits up to graceMs for executions to end, then interrupts the rest and waits for them. */
    async drain(graceMs: number) {
      let graceTimer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled(inFlight()),
        new Promise((resolve) => {
          graceTimer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(graceTimer);
      // Past the grace period: abort without failing; they stay pending for the next start.
      for (const execution of executions.values()) execution.controller.abort(new RunInterruption("stop"));
      await Promise.allSettled(inFlight());
    },
  };
}

export type RunLauncher = ReturnType<typeof createRunLauncher>;
