import type { PromptrunConfig } from "../config.ts";
import type { RunEngine } from "../engine-port.ts";
import { createModelGateway, type ModelGateway } from "../models/model-gateway.ts";
import type { Clock, RunRecord, Store, ThreadEventBus, WebhookDeliveryRecord } from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import type { EngineMetrics } from "../services.ts";
import {
  type ClusterCoordinator,
  createClusterCoordinator,
  type EngineCluster,
} from "./cluster-coordinator.ts";
import { CANCELLED, endRunFailed } from "./run-ending.ts";
import { type ExecutionOutcome, executeRun, type RunExecutorDeps } from "./run-executor.ts";
import { RunInterruption } from "./run-interruption.ts";
import { RunScheduler } from "./scheduler.ts";

export interface EngineDeps {
  store: Store;
  config: PromptrunConfig;
  clock: Clock;
  events: ThreadEventBus;
  secrets: SecretBox;
  /** Transport for provider calls (tests point it anywhere; tenant URLs are guarded on top). */
  fetch?: typeof fetch;
  /** Webhook outbox rows for a run that just ended, written in the same transaction. */
  buildWebhookDeliveries?: (run: RunRecord) => Promise<WebhookDeliveryRecord[]>;
  /** Replaces the provider gateway (tests inject models); default: createModelGateway(config, fetch). */
  models?: ModelGateway;
  metrics?: EngineMetrics;
  /** Unexpected failures (the store down mid-run…): the run stays pending and resumes on restart. */
  logError?: (message: string, error: unknown) => void;
  /** Backoff jitter in [0, 1); default Math.random. */
  random?: () => number;
  /**
   * Set when several instances share the store: runs are then leased before they execute (see
   * cluster-coordinator.ts), discovered by polling instead of loaded once at start, and cancels
   * reach the instance executing the run.
   */
  cluster?: EngineCluster;
}

/** not-claimed: another instance holds the run (or its channel's earlier run, or the tenant's slots). */
type LaunchOutcome = ExecutionOutcome | { kind: "not-claimed" } | null;

interface Execution {
  controller: AbortController;
  /** Only the first cancel() of a run can be the one that ended it. */
  cancelRequested: boolean;
  done: Promise<LaunchOutcome>;
}

const DEFAULT_STOP_GRACE_MS = 10_000;
/** A cancel of a run executing on another instance waits this long at most for its end. */
const REMOTE_CANCEL_WAIT_MS = 15_000;

/**
 * The run engine: an in-memory scheduler in front of executeRun. The store holds the durable
 * state: start() reloads pending runs (oldest first), complete/fail are compare-and-set, so a
 * run is never lost and never ends twice. With `cluster`, the scheduler orders what this
 * instance knows of (runs created here and the shared queue's frontier, polled), and each run is
 * leased in the store before it executes: one instance at a time, strict channel order and the
 * per-tenant limit across instances; a dead instance's runs are taken over when its leases lapse.
 */
export function createEngine(deps: EngineDeps): RunEngine {
  const { config, store } = deps;
  const scheduler = new RunScheduler({
    concurrency: config.concurrency,
    tenantConcurrency: config.tenantConcurrency,
    agingMs: config.agingSeconds * 1000,
  });
  const executorDeps: RunExecutorDeps = {
    store,
    config,
    clock: deps.clock,
    events: deps.events,
    secrets: deps.secrets,
    models: deps.models ?? createModelGateway({ config, ...(deps.fetch ? { fetch: deps.fetch } : {}) }),
    buildWebhookDeliveries: deps.buildWebhookDeliveries,
    metrics: deps.metrics,
    random: deps.random ?? Math.random,
  };
  const queuedRuns = new Map<string, RunRecord>();
  /** Plaintext run envVars from enqueue: memory only, dropped when the run leaves the engine. */
  const envVarsByRun = new Map<string, Record<string, string>>();
  const executions = new Map<string, Execution>();
  let state: "idle" | "running" | "stopped" = "idle";
  const logError = deps.logError ?? (() => {});
  /** Queued because a poll offered them (not created here): each poll's frontier replaces them. */
  const polled = new Set<string>();
  const coordinator: ClusterCoordinator | null = deps.cluster
    ? createClusterCoordinator({
        store,
        clock: deps.clock,
        cluster: deps.cluster,
        tenantLimit: config.tenantConcurrency,
        pollLimit: Math.max(16, config.concurrency),
        onClaimable: (runs) => takeFrontier(runs),
        // Taken over elsewhere: stop here without ending it (the new owner finishes it).
        onLeaseLost: (runId) => executions.get(runId)?.controller.abort(new RunInterruption("stop")),
        onCancelRequested: (runId) => {
          const execution = executions.get(runId);
          if (!execution) return;
          execution.cancelRequested = true;
          execution.controller.abort(new RunInterruption("cancel"));
        },
        logError,
      })
    : null;

  const addToQueue = (run: RunRecord, envVars?: Record<string, string>) => {
    if (run.status !== "pending" || executions.has(run.id)) return;
    const added = scheduler.enqueue({
      runId: run.id,
      tenantId: run.tenantId,
      threadId: run.threadId,
      channel: run.channel,
      priority: run.priority,
      enqueuedAt: run.createdAt.getTime(),
    });
    if (!added) return;
    queuedRuns.set(run.id, run);
    if (envVars) envVarsByRun.set(run.id, envVars);
  };

  /** With a cluster: lease first, then execute the run as the store has it now. */
  const execute = async (
    queued: RunRecord,
    envVars: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<LaunchOutcome> => {
    if (!coordinator) return executeRun(executorDeps, queued, envVars, signal);
    if (!(await coordinator.claim(queued.id))) return { kind: "not-claimed" };
    let outcome: LaunchOutcome = null;
    try {
      // Another instance may have started it before dying (attempts, startedAt): read it afresh.
      const run = await store.runs.getById(queued.id);
      outcome = run?.status === "pending" ? await executeRun(executorDeps, run, envVars, signal) : null;
      return outcome ?? { kind: "already-ended" };
    } finally {
      if (outcome === null || outcome.kind === "interrupted") {
        await coordinator.release(queued.id).catch((error: unknown) => {
          logError(`run ${queued.id}: releasing its lease failed; it lapses instead`, error);
        });
      } else {
        coordinator.forget(queued.id);
      }
      // Its channel, and a slot of its tenant, may be free for another instance now.
      coordinator.announceWork();
    }
  };

  const launch = (runId: string) => {
    const run = queuedRuns.get(runId);
    queuedRuns.delete(runId);
    polled.delete(runId);
    if (!run) {
      scheduler.finish(runId);
      return;
    }
    const controller = new AbortController();
    const done = execute(run, envVarsByRun.get(runId), controller.signal)
      .catch((error: unknown) => {
        logError(`run ${runId} stopped on an unexpected error; it stays pending`, error);
        return null;
      })
      .finally(() => {
        executions.delete(runId);
        envVarsByRun.delete(runId);
        scheduler.finish(runId);
        pump();
      });
    executions.set(runId, { controller, cancelRequested: false, done });
  };

  // Reported once per event-loop turn: a burst of creates would otherwise set the gauge per run.
  let queueDepthReportPending = false;
  const reportQueueDepth = () => {
    if (!deps.metrics || queueDepthReportPending) return;
    queueDepthReportPending = true;
    setImmediate(() => {
      queueDepthReportPending = false;
      deps.metrics?.queueDepth(scheduler.stats().queued);
    });
  };

  /** Keeps the polled part of the local queue equal to the shared queue's latest frontier. */
  const takeFrontier = (runs: RunRecord[]) => {
    if (state !== "running") return;
    const offered = new Set(runs.map((run) => run.id));
    for (const runId of [...polled]) {
      if (offered.has(runId)) continue;
      polled.delete(runId);
      if (scheduler.remove(runId)) queuedRuns.delete(runId);
    }
    for (const run of runs) {
      if (scheduler.isQueued(run.id) || executions.has(run.id)) continue;
      addToQueue(run);
      if (scheduler.isQueued(run.id)) polled.add(run.id);
    }
    pump();
  };

  const pump = () => {
    if (state === "running") {
      for (let next = scheduler.next(); next; next = scheduler.next()) launch(next.runId);
    }
    reportQueueDepth();
  };

  /** Fails a run that is not executing here (queued, or pending in the store only). */
  const failCancelled = async (run: RunRecord | null): Promise<boolean> =>
    run?.status === "pending" ? endRunFailed(deps, run, { error: CANCELLED }) : false;

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
    if (!(await store.runs.requestCancel(runId, deps.clock.now()))) return false;
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

  return {
    async start() {
      if (state === "running") return;
      if (coordinator) {
        state = "running";
        coordinator.start();
        pump();
        return;
      }
      const pending = await store.runs.listPending();
      for (const run of pending) addToQueue(run);
      state = "running";
      pump();
    },

    async stop(options) {
      if (state === "stopped") return;
      state = "stopped";
      coordinator?.stop();
      scheduler.clearQueued();
      queuedRuns.clear();
      polled.clear();
      reportQueueDepth();
      for (const runId of [...envVarsByRun.keys()]) if (!executions.has(runId)) envVarsByRun.delete(runId);
      const inFlight = () => [...executions.values()].map((execution) => execution.done);
      const graceMs = options?.graceMs ?? DEFAULT_STOP_GRACE_MS;
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

    enqueue(run, envVars) {
      if (state === "stopped") return;
      addToQueue(run, envVars);
      pump();
      // Busy here: another instance may have room for it.
      if (scheduler.isQueued(run.id)) coordinator?.announceWork();
    },

    async cancel(runId) {
      if (scheduler.isQueued(runId)) {
        const run = queuedRuns.get(runId) ?? null;
        scheduler.remove(runId);
        queuedRuns.delete(runId);
        envVarsByRun.delete(runId);
        polled.delete(runId);
        reportQueueDepth();
        // Queued here is not leased here: with a cluster, another instance may be executing it.
        return coordinator ? cancelShared(coordinator, runId) : failCancelled(run);
      }
      const execution = executions.get(runId);
      if (execution) {
        const first = !execution.cancelRequested;
        execution.cancelRequested = true;
        execution.controller.abort(new RunInterruption("cancel"));
        const outcome = await execution.done;
        if (outcome?.kind === "not-claimed" && coordinator) return cancelShared(coordinator, runId);
        return first && outcome?.kind === "failed" && outcome.cancelled;
      }
      if (coordinator) return cancelShared(coordinator, runId);
      return failCancelled(await store.runs.getById(runId));
    },

    stats() {
      return scheduler.stats();
    },
  };
}
