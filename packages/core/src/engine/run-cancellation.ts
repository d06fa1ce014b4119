import type { RunRecord } from "../ports.ts";
import type { ClusterCoordinator } from "./cluster-coordinator.ts";
import type { LocalQueue } from "./local-queue.ts";
import { CANCELLED, endRunFailed, type RunEndingDeps } from "./run-ending.ts";
import type { RunLauncher } from "./run-launcher.ts";

/** A cancel of a run executing on another instance waits this long at most for its end. */
const REMOTE_CANCEL_WAIT_MS = 15_000;

export interface RunCancellationOptions {
  ending: RunEndingDeps;
  queue: LocalQueue;
  launcher: RunLauncher;
  /** Set with a cluster: the run may be queued or executing on another instance. */
  coordinator: ClusterCoordinator | null;
  /** A run not executing here was cancelled: queued here, or pending in the store only. */
  onEnded?(run: RunRecord, wasQueued: boolean): void;
  /** A run pending in the store only is about to be cancelled there. */
  onStoreCancel?(runId: string): void;
}

/**
 * cancel(runId): true when this call ended the run as cancelled. A run queued here or only
 * pending in the store is failed at once; one executing here is aborted and ends itself; with a
 * cluster, the request is shared so the instance executing it aborts it.
 */
export function createRunCancellation(options: RunCancellationOptions) {
  const { ending, queue, launcher, coordinator } = options;
  const { store } = ending;

  /** Fails a run that is not executing here (queued, or pending in the store only). */
  const failCancelled = async (run: RunRecord | null, wasQueued = false): Promise<boolean> => {
    if (run?.status !== "pending") return false;
    const ended = await endRunFailed(ending, run, { error: CANCELLED });
    if (ended) options.onEnded?.(run, wasQueued);
    return ended;
  };

  /** Until the run has ended (another instance is aborting it), or the wait is over. */
  const waitUntilEnded = async (runId: string) => {
    const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
    while (Date.now() < deadline) {
      if ((await store.runs.getById(runId))?.status !== "pending") return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  /**
   * Cancel with a cluster: the request is stored (the executing instance sees it at its next
   * renewal) and announced (it aborts at once); a run nobody holds is leased and failed here.
   */
  const cancelShared = async (cluster: ClusterCoordinator, runId: string): Promise<boolean> => {
    if (!(await store.runs.requestCancel(runId, ending.clock.now()))) return false;
    cluster.announceCancel(runId);
    if (await cluster.claim(runId, { ignoreChannelOrder: true })) {
      try {
        return await failCancelled(await store.runs.getById(runId));
      } finally {
        cluster.forget(runId);
        cluster.announceWork();
      }
    }
    await waitUntilEnded(runId);
    return false;
  };

  return async function cancel(runId: string): Promise<boolean> {
    if (queue.isQueued(runId)) {
      const run = queue.remove(runId);
      // Queued here is not leased here: with a cluster, another instance may be executing it.
      return coordinator ? cancelShared(coordinator, runId) : failCancelled(run, true);
    }
    const execution = launcher.get(runId);
    if (execution) {
      const first = launcher.requestCancel(execution);
      const outcome = await execution.done;
      if (outcome?.kind === "not-claimed" && coordinator) return cancelShared(coordinator, runId);
      return first && outcome?.kind === "failed" && outcome.cancelled;
    }
    if (coordinator) return cancelShared(coordinator, runId);
    // Pending in the store only: no page may load it from now on.
    options.onStoreCancel?.(runId);
    return failCancelled(await store.runs.getById(runId));
  };
}
