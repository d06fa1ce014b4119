import type { PromptrunConfig } from "../config.ts";
import type { RunEngine } from "../engine-port.ts";
import type { KnowledgeSearch } from "../knowledge/ports.ts";
import { createModelGateway, type ModelGateway } from "../models/model-gateway.ts";
import type {
  Clock,
  PendingOutlineRow,
  RunRecord,
  Store,
  ThreadEventBus,
  WebhookDeliveryRecord,
} from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import type { EngineMetrics } from "../services.ts";
import type { EngineCluster } from "./cluster-coordinator.ts";
import { wireEngineCluster } from "./engine-cluster-wiring.ts";
import { addDepths, createLocalQueue } from "./local-queue.ts";
import { startPauseExpiry } from "./pause-expiry.ts";
import { createPendingFrontier } from "./pending-frontier.ts";
import { createRunCancellation } from "./run-cancellation.ts";
import type { RunExecutorDeps } from "./run-executor.ts";
import { createRunLauncher } from "./run-launcher.ts";

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
  /** Transport for http and mcp tools (tests point it anywhere; the private-range guard applies on top). */
  toolFetch?: typeof fetch;
  /**
   * Set when several instances share the store: runs are then leased before they execute (see
   * cluster-coordinator.ts), discovered by polling instead of loaded once at start, and cancels
   * reach the instance executing the run.
   */
  cluster?: EngineCluster;
  /** Knowledge-base search for prompts with `retrieval:` and knowledge_base tools (docs/KNOWLEDGE.md). */
  knowledge?: KnowledgeSearch;
  /** Called after a run ended here (completed or failed; once, by the end's winner): workflow runs advance. */
  onRunEnded?: (run: RunRecord) => void;
  /** One instance: the pending runs per tenant and class, as counted at start (the pending cap primes its counts). */
  onPendingOutline?: (outline: PendingOutlineRow[]) => void;
}

const DEFAULT_STOP_GRACE_MS = 10_000;

/**
 * The run engine: an in-memory scheduler in front of executeRun, composed of its parts — the
 * local queue (local-queue.ts), launch and execution (run-launcher.ts), cancellation
 * (run-cancellation.ts), the cluster wiring (engine-cluster-wiring.ts) and the end of a run
 * (run-ending.ts). The store holds the durable
 * state: start() reloads pending runs (oldest first), complete/fail are compare-and-set, so a
 * run is never lost and never ends twice. With `cluster`, the scheduler orders what this
 * instance knows of (runs created here and the shared queue's frontier, polled), and each run is
 * leased in the store before it executes: one instance at a time, strict channel order and the
 * per-tenant limit across instances; a dead instance's runs are taken over when its leases lapse.
 */
export function createEngine(deps: EngineDeps): RunEngine {
  const { config, store } = deps;
  const logError = deps.logError ?? (() => {});
  let state: "idle" | "running" | "stopped" = "idle";
  let stopPauseExpiry: (() => void) | null = null;

  // The parts refer to each other through late-bound closures: none is called before all exist.
  const coordinator = deps.cluster
    ? wireEngineCluster({
        store,
        clock: deps.clock,
        config,
        cluster: deps.cluster,
        logError,
        takeFrontier: (runs) => takeFrontier(runs),
        launcher: () => launcher,
      })
    : null;
  const queue = createLocalQueue({
    concurrency: config.concurrency,
    tenantConcurrency: config.tenantConcurrency,
    agingMs: config.agingSeconds * 1000,
    isExecuting: (runId) => launcher.isExecuting(runId),
    metrics: deps.metrics,
    storedDepth: () => frontier?.storedByClass(),
  });
  const launcher = createRunLauncher({
    executorDeps: executorDepsOf(deps),
    store,
    coordinator,
    logError,
    onFinished: (runId, outcome) => {
      frontier?.ended(runId);
      // With a cluster the store's claim keeps the paused run's channel waiting; here the queue does.
      if (outcome?.kind === "paused" && !coordinator) queue.pause(runId);
      else queue.finish(runId);
      pump();
    },
  });
  // One instance: deep backlogs stay in the store (a cluster polls a bounded frontier instead).
  const frontier = coordinator
    ? null
    : createPendingFrontier({
        store,
        queue,
        capacity: config.queueMemoryRuns,
        isExecuting: (runId) => launcher.isExecuting(runId),
        onLoaded: () => pump(),
        ...(deps.onPendingOutline ? { onOutline: deps.onPendingOutline } : {}),
        logError,
      });
  const cancel = createRunCancellation({
    ending: deps,
    queue,
    launcher,
    coordinator,
    onEnded: (run, wasQueued) => (wasQueued ? frontier?.ended(run.id) : frontier?.endedInStore(run)),
    onStoreCancel: (runId) => frontier?.skip(runId),
  });

  /** A paused run no longer holds its channel (it ended, or continues and is added again). */
  const releasePaused = (runId: string) => {
    queue.unpause(runId);
    pump();
    coordinator?.announceWork();
  };

  const pump = () => {
    if (state === "running") {
      for (let next = queue.next(); next; next = queue.next()) {
        if (next.launchable) launcher.launch(next.launchable);
        else queue.finish(next.runId);
      }
      frontier?.refillIfLow();
    }
    queue.reportDepth();
  };

  const takeFrontier = (runs: RunRecord[]) => {
    if (state !== "running") return;
    queue.replacePolled(runs);
    pump();
  };

  return {
    async start() {
      if (state === "running") return;
      stopPauseExpiry = startPauseExpiry({
        ending: deps,
        config,
        onExpired: (run) => releasePaused(run.id),
        logError,
      });
      if (coordinator) {
        state = "running";
        coordinator.start();
        pump();
        return;
      }
      await frontier?.load();
      state = "running";
      pump();
    },

    async stop(options) {
      if (state === "stopped") return;
      state = "stopped";
      stopPauseExpiry?.();
      coordinator?.stop();
      frontier?.stop();
      queue.clear();
      await launcher.drain(options?.graceMs ?? DEFAULT_STOP_GRACE_MS);
    },

    enqueue(run, envVars) {
      if (state === "stopped") return;
      // Past the frontier's budget the run waits in the store; its plaintext envVars are dropped
      // (the stored, encrypted ones are read at launch).
      if (frontier && !run.pause && !frontier.admit(run)) {
        frontier.refillIfLow();
        queue.reportDepth();
        return;
      }
      queue.add(run, envVars);
      pump();
      // Busy here: another instance may have room for it.
      if (queue.isQueued(run.id)) coordinator?.announceWork();
    },

    resume(run) {
      // The caller's outputs are stored: the thread hears of each, as of a server tool's result.
      const step = run.steps.at(-1);
      for (const result of step?.toolResults ?? []) {
        if (result.executedBy !== "client") continue;
        const { toolCallId, name, isError } = result;
        deps.events.publish(run.tenantId, run.threadId, {
          type: "run.tool_result",
          data: { runId: run.id, step: step!.index, toolCallId, name, isError },
        });
      }
      if (state === "stopped") return;
      queue.unpause(run.id);
      queue.add(run);
      pump();
      if (queue.isQueued(run.id)) coordinator?.announceWork();
    },

    async cancel(runId) {
      const ended = await cancel(runId);
      // A paused run is failed through the store; its channel is then free here.
      if (ended) releasePaused(runId);
      return ended;
    },

    stats() {
      const { queued, executing } = queue.stats();
      const stored = frontier?.storedByClass();
      return {
        queued: stored ? addDepths(queued, stored) : queued,
        executing,
        queuedInMemory: queue.queuedTotal(),
      };
    },
  };
}

function executorDepsOf(deps: EngineDeps): RunExecutorDeps {
  const { config } = deps;
  return {
    store: deps.store,
    config,
    clock: deps.clock,
    events: deps.events,
    secrets: deps.secrets,
    models: deps.models ?? createModelGateway({ config, ...(deps.fetch ? { fetch: deps.fetch } : {}) }),
    buildWebhookDeliveries: deps.buildWebhookDeliveries,
    metrics: deps.metrics,
    random: deps.random ?? Math.random,
    toolFetch: deps.toolFetch,
    knowledge: deps.knowledge,
    onRunEnded: deps.onRunEnded,
  };
}
