import type { PromptrunConfig } from "../config.ts";
import type { RunEngine } from "../engine-port.ts";
import { createModelGateway, type ModelGateway } from "../models/model-gateway.ts";
import type { Clock, RunRecord, Store, ThreadEventBus, WebhookDeliveryRecord } from "../ports.ts";
import { buildCost, zeroCostBlock } from "../pricing/cost.ts";
import type { SecretBox } from "../security/secret-box.ts";
import type { EngineMetrics } from "../services.ts";
import { CANCELLED, type ExecutionOutcome, executeRun, type RunExecutorDeps } from "./run-executor.ts";
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
}

interface Execution {
  controller: AbortController;
  /** Only the first cancel() of a run can be the one that ended it. */
  cancelRequested: boolean;
  done: Promise<ExecutionOutcome | null>;
}

const DEFAULT_STOP_GRACE_MS = 10_000;

/**
 * The run engine: an in-memory scheduler in front of executeRun. The store holds the durable
 * state: start() reloads pending runs (oldest first), complete/fail are compare-and-set, so a
 * run is never lost and never ends twice.
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

  const launch = (runId: string) => {
    const run = queuedRuns.get(runId);
    queuedRuns.delete(runId);
    if (!run) {
      scheduler.finish(runId);
      return;
    }
    const controller = new AbortController();
    const done = executeRun(executorDeps, run, envVarsByRun.get(runId), controller.signal)
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

  const reportQueueDepth = () => deps.metrics?.queueDepth(scheduler.stats().queued);

  const pump = () => {
    if (state === "running") {
      for (let next = scheduler.next(); next; next = scheduler.next()) launch(next.runId);
    }
    reportQueueDepth();
  };

  /** Fails a run that is not executing here (queued, or pending in the store only). */
  const failCancelled = async (run: RunRecord | null): Promise<boolean> => {
    if (run?.status !== "pending") return false;
    const finishedAt = deps.clock.now();
    const cost = buildCost(zeroCostBlock(), zeroCostBlock());
    const finalRun: RunRecord = {
      ...run,
      status: "failed",
      error: CANCELLED,
      cost,
      finishedAt,
      encryptedEnvVars: null,
    };
    const deliveries = (await deps.buildWebhookDeliveries?.(finalRun)) ?? [];
    const ended = await store.runs.fail(run.id, { error: CANCELLED, cost, finishedAt, deliveries });
    if (ended) {
      deps.events.publish(run.tenantId, run.threadId, {
        type: "run.failed",
        data: { runId: run.id, error: CANCELLED, cost, finishedAt: finishedAt.toISOString() },
      });
    }
    return ended;
  };

  return {
    async start() {
      if (state === "running") return;
      const pending = await store.runs.listPending();
      for (const run of pending) addToQueue(run);
      state = "running";
      pump();
    },

    async stop(options) {
      if (state === "stopped") return;
      state = "stopped";
      scheduler.clearQueued();
      queuedRuns.clear();
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
    },

    async cancel(runId) {
      if (scheduler.isQueued(runId)) {
        const run = queuedRuns.get(runId) ?? null;
        scheduler.remove(runId);
        queuedRuns.delete(runId);
        envVarsByRun.delete(runId);
        reportQueueDepth();
        return failCancelled(run);
      }
      const execution = executions.get(runId);
      if (execution) {
        const first = !execution.cancelRequested;
        execution.cancelRequested = true;
        execution.controller.abort(new RunInterruption("cancel"));
        const outcome = await execution.done;
        return first && outcome?.kind === "failed" && outcome.cancelled;
      }
      return failCancelled(await store.runs.getById(runId));
    },

    stats() {
      return scheduler.stats();
    },
  };
}
