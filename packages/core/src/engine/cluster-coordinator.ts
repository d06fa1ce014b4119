import type { Clock, ClusterSignals, RunRecord, Store } from "../ports.ts";

/** Several instances share the store: runs are leased before they execute (engine option). */
export interface EngineCluster {
  /** This process's name in leases; unique per process (a restart is a new owner). */
  owner: string;
  /** Lease length: a dead instance's runs are taken over this long after its last renewal. */
  leaseMs: number;
  /** Renewal period (default leaseMs / 3). */
  renewEveryMs?: number;
  /** Polling period for claimable runs (default 250 ms). */
  pollEveryMs?: number;
  /** Shortest gap between two polls, however often signals wake the poller (default 25 ms). */
  minPollGapMs?: number;
  /** Cross-instance notifications (Redis); polling and renewals work without them, only slower. */
  signals?: ClusterSignals;
}

export interface ClusterCoordinatorOptions {
  store: Store;
  clock: Clock;
  cluster: EngineCluster;
  /** Per-tenant concurrency across instances (config.tenantConcurrency). */
  tenantLimit: number;
  /** Claimable runs fetched per class and poll. */
  pollLimit: number;
  /** The latest claimable runs (the frontier of the shared queue). */
  onClaimable(runs: RunRecord[]): void;
  /** A lease renewal found a run taken over by another instance (this one stalled too long). */
  onLeaseLost(runId: string): void;
  /** Another instance asked for a run this one executes to be cancelled. */
  onCancelRequested(runId: string): void;
  logError(message: string, error: unknown): void;
}

export interface ClusterCoordinator {
  start(): void;
  stop(): void;
  /** Leases a run to this instance; the lease is then renewed until released or forgotten. */
  claim(runId: string, options?: { ignoreChannelOrder?: boolean }): Promise<boolean>;
  /** Gives a run back without ending it (stopped, or not executable here). */
  release(runId: string): Promise<void>;
  /** The run ended: the store dropped its lease with the end. */
  forget(runId: string): void;
  /** Polls soon (something may have become claimable). */
  wake(): void;
  announceWork(): void;
  announceCancel(runId: string): void;
}

/**
 * The shared-queue side of the engine: polls the store for claimable runs (at once when a signal
 * says there is work), takes and renews leases, and turns renewals into "lease lost" and
 * "cancel requested" notices. The engine's scheduler still decides locally what runs next.
 */
export function createClusterCoordinator(options: ClusterCoordinatorOptions): ClusterCoordinator {
  const { store, clock, cluster } = options;
  const pollEveryMs = cluster.pollEveryMs ?? 250;
  const minPollGapMs = cluster.minPollGapMs ?? 25;
  const renewEveryMs = cluster.renewEveryMs ?? Math.max(50, Math.floor(cluster.leaseMs / 3));
  /** Runs this instance holds a lease on. */
  const owned = new Set<string>();
  let running = false;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let nextPollAt = Number.POSITIVE_INFINITY;
  let polling = false;
  let pollAgain = false;
  let lastPollAt = 0;
  let renewTimer: ReturnType<typeof setInterval> | undefined;
  let renewing = false;
  let stopListening: (() => void) | undefined;

  const leaseUntil = () => new Date(clock.now().getTime() + cluster.leaseMs);

  const schedulePoll = (delayMs: number) => {
    if (!running) return;
    const at = Date.now() + delayMs;
    if (pollTimer !== undefined && at >= nextPollAt) return;
    clearTimeout(pollTimer);
    nextPollAt = at;
    pollTimer = setTimeout(poll, delayMs);
    pollTimer.unref?.();
  };

  async function poll() {
    pollTimer = undefined;
    nextPollAt = Number.POSITIVE_INFINITY;
    if (!running) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    try {
      const runs = await store.runs.listClaimable(clock.now(), options.pollLimit, {
        tenantLimit: options.tenantLimit,
      });
      if (running) options.onClaimable(runs);
    } catch (error) {
      options.logError("polling the shared queue failed; retrying", error);
    } finally {
      polling = false;
      lastPollAt = Date.now();
      schedulePoll(pollAgain ? minPollGapMs : pollEveryMs);
      pollAgain = false;
    }
  }

  const renew = async () => {
    if (renewing || owned.size === 0) return;
    renewing = true;
    const ids = [...owned];
    try {
      const { renewed, cancelRequested } = await store.runs.renewLeases(cluster.owner, ids, leaseUntil());
      const kept = new Set(renewed);
      for (const id of ids) if (!kept.has(id) && owned.delete(id)) options.onLeaseLost(id);
      for (const id of cancelRequested) if (owned.has(id)) options.onCancelRequested(id);
    } catch (error) {
      // The leases run out if this keeps failing; another instance then takes the runs over.
      options.logError("renewing run leases failed", error);
    } finally {
      renewing = false;
    }
  };

  const wake = () => {
    if (!running) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    schedulePoll(Math.max(0, lastPollAt + minPollGapMs - Date.now()));
  };

  return {
    start() {
      if (running) return;
      running = true;
      stopListening = cluster.signals?.listen({
        onWork: wake,
        onCancel: (runId) => {
          if (owned.has(runId)) options.onCancelRequested(runId);
        },
      });
      renewTimer = setInterval(renew, renewEveryMs);
      renewTimer.unref?.();
      schedulePoll(0);
    },
    stop() {
      running = false;
      clearTimeout(pollTimer);
      pollTimer = undefined;
      clearInterval(renewTimer);
      stopListening?.();
      stopListening = undefined;
    },
    async claim(runId, claimOptions) {
      const claimed = await store.runs.claim(runId, cluster.owner, leaseUntil(), clock.now(), {
        ...(claimOptions?.ignoreChannelOrder
          ? { ignoreChannelOrder: true }
          : { tenantLimit: options.tenantLimit }),
      });
      if (claimed) owned.add(runId);
      return claimed;
    },
    async release(runId) {
      if (!owned.delete(runId)) return;
      await store.runs.releaseLease(runId, cluster.owner);
    },
    forget(runId) {
      owned.delete(runId);
    },
    wake,
    announceWork() {
      cluster.signals?.announceWork();
    },
    announceCancel(runId) {
      cluster.signals?.announceCancel(runId);
    },
  };
}
