import type { PromptrunConfig } from "./config.ts";
import { createEngine, type EngineCluster } from "./engine/index.ts";
import type { RunEngine } from "./engine-port.ts";
import { createEnvironmentService } from "./environments/index.ts";
import { createInMemoryThreadEventBus } from "./events/index.ts";
import { documentOutboxBuilder } from "./knowledge/document-events.ts";
import { createIngestionWorker } from "./knowledge/ingestion-worker.ts";
import { createKnowledgeParts, type KnowledgeParts } from "./knowledge/knowledge-parts.ts";
import { createKnowledgeService } from "./knowledge/knowledge-service.ts";
import type { KnowledgeSearch } from "./knowledge/ports.ts";
import { createKnowledgeSearch } from "./knowledge/search.ts";
import type { Clock, Store, ThreadEventBus } from "./ports.ts";
import { createTokenBucketRateLimiter } from "./rate-limit/token-bucket.ts";
import { createSecretBox, type SecretBox } from "./security/secret-box.ts";
import { createStreamTokenService } from "./security/stream-tokens.ts";
import { createAuthService } from "./services/auth-service.ts";
import { createConsoleSessionService } from "./services/console-session-service.ts";
import { createPendingRunCounter } from "./services/pending-run-counter.ts";
import { createPromptService } from "./services/prompt-service.ts";
import { createRunService } from "./services/run-service.ts";
import type { SignInFailures } from "./services/sign-in-failures.ts";
import { createTenantService } from "./services/tenant-service.ts";
import { createThreadService } from "./services/thread-service.ts";
import { uuidv7 } from "./services/uuidv7.ts";
import type { EngineMetrics, PromptrunServices, RateLimitService } from "./services.ts";
import { createWebhookDispatcher, createWebhookService } from "./webhooks/index.ts";
import { createWorkflowService } from "./workflows/definitions/index.ts";
import { createWorkflowRuns, type WorkflowRuns } from "./workflows/runs/index.ts";

type EngineOptions = Parameters<typeof createEngine>[0];

export interface PromptrunDeps {
  store: Store;
  config: PromptrunConfig;
  clock?: Clock;
  events?: ThreadEventBus;
  /** Outgoing HTTP (providers, webhooks); tests inject one. */
  fetch?: typeof fetch;
  /** Replaces the engine (service tests). */
  engine?: RunEngine;
  /** Passed through to createEngine's `models` option (fake providers in tests). */
  modelOverrides?: EngineOptions["models"];
  /** Engine observability hooks (the app wires them to Prometheus). */
  metrics?: EngineMetrics;
  /** Replaces the in-process token buckets (several instances share a Redis one). */
  rateLimits?: RateLimitService;
  /** Replaces the in-process count of failed console sign-ins (several instances share a Redis one). */
  signInFailures?: SignInFailures;
  /**
   * Several instances share the store: the engine leases runs (see createEngine) and the webhook
   * dispatcher its deliveries under `cluster.owner`. Pass `events`, `rateLimits` and
   * `signInFailures` that are shared too (Redis), or streaming and limits stay per instance.
   */
  cluster?: EngineCluster;
  /** Unexpected engine failures (the store down mid-run…). */
  logError?: (message: string, error: unknown) => void;
  /** Extraction, chunking, embedding and type detection of knowledge bases (tests pass fakes). */
  knowledgeParts?: KnowledgeParts;
  /** The ingestion worker's lease, renewal and poll periods (defaults 30 s, 10 s, 1 s; e2e tests shorten them). */
  ingestion?: { leaseMs?: number; renewMs?: number; pollMs?: number };
}

export interface Promptrun {
  services: PromptrunServices;
  engine: RunEngine;
  /** Searching knowledge bases as runs do (the engine's `retrieval:` and knowledge_base tool). */
  knowledge: KnowledgeSearch;
  start(): Promise<void>;
  stop(options?: { graceMs?: number }): Promise<void>;
}

const systemClock: Clock = { now: () => new Date() };

/**
 * The composition root of core: one SecretBox, event bus, engine, webhook dispatcher and the
 * services over them. The caller owns the store (and closes it after stop()).
 */
export function createPromptrun(deps: PromptrunDeps): Promptrun {
  const { store, config } = deps;
  const clock = deps.clock ?? systemClock;
  const secrets = createSecretBox(config.secret, config.previousSecrets);
  const events =
    deps.events ?? createInMemoryThreadEventBus({ replayBufferSeconds: config.replayBufferSeconds, clock });

  const dispatcher = composeDispatcher(deps, secrets, clock);
  const rateLimits = deps.rateLimits ?? createTokenBucketRateLimiter({ rateLimit: config.rateLimit, clock });
  const knowledge = composeKnowledge(deps, clock, rateLimits, () => dispatcher.wake());
  const engine =
    deps.engine ??
    composeEngine(deps, {
      clock,
      events,
      secrets,
      dispatcher,
      knowledge: knowledge.search,
      // Bound late: the workflow runs and the pending counter are built on the engine.
      onRunEnded: (run) => workflowRuns.onRunEnded(run),
      onPendingOutline: (outline) => pendingRuns.prime(outline),
    });

  /** New outbox rows (prompt events, a redelivery): the dispatcher polls now. */
  const wake = () => dispatcher.wake();
  const pendingRuns = composePendingRunCounter(deps, clock);
  const workflowRuns: WorkflowRuns = createWorkflowRuns({
    store,
    pendingRuns,
    config,
    clock,
    engine,
    events,
    secrets,
    rateLimits,
    knowledge: knowledge.search,
    wakeDispatcher: wake,
    logError: deps.logError,
  });
  const auth = createAuthService({ store });
  const services: PromptrunServices = {
    auth,
    tenants: createTenantService({ store, clock, quotas: config.quotas }),
    prompts: createPromptService({ store, clock, providers: config, quotas: config.quotas, onEnqueue: wake }),
    runs: createRunService({ store, config, clock, engine, secrets, rateLimits, pendingRuns }),
    threads: createThreadService({ store, clock }),
    streamTokens: createStreamTokenService({ config, clock, rateLimits, tenants: store.tenants }),
    environments: createEnvironmentService({ store, secrets, clock, quotas: config.quotas }),
    webhooks: createWebhookService({ store, config, secrets, clock, onRequeue: wake }),
    consoleSessions: createConsoleSessionService({ store, clock, auth, failures: deps.signInFailures }),
    knowledge: knowledge.service,
    workflows: createWorkflowService({ store, clock }),
    workflowRuns: workflowRuns.service,
    rateLimits,
    events,
  };

  let state: "idle" | "running" | "stopped" = "idle";
  return {
    services,
    engine,
    knowledge: knowledge.search,
    async start() {
      if (state !== "idle") return;
      state = "running";
      await engine.start();
      await workflowRuns.start();
      dispatcher.start();
      knowledge.worker.start();
    },
    async stop(options) {
      if (state === "stopped") return;
      const wasRunning = state === "running";
      state = "stopped";
      // The engine first: runs ending during the grace period still write their webhook outbox.
      if (wasRunning) {
        await Promise.all([engine.stop(options), knowledge.worker.stop(options)]);
        await workflowRuns.stop();
        await dispatcher.stop();
      }
      await events.close();
    },
  };
}

/**
 * One pending cap per tenant for prompt runs and workflow runs (docs/WORKFLOWS.md "Runs"). One
 * instance sees every create and end itself: its count need not age (only other instances'
 * creates would make it stale), so a deep backlog is counted at start and at the cap only.
 */
function composePendingRunCounter(deps: PromptrunDeps, clock: Clock) {
  return createPendingRunCounter({
    countPending: (tenantId) => deps.store.runs.countPending(tenantId),
    clock,
    ...(deps.cluster ? {} : { maxAgeMs: Number.POSITIVE_INFINITY }),
  });
}

function composeDispatcher(deps: PromptrunDeps, secrets: SecretBox, clock: Clock) {
  return createWebhookDispatcher({
    store: deps.store,
    config: deps.config,
    secrets,
    clock,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.cluster ? { owner: deps.cluster.owner } : {}),
    ...(deps.logError !== undefined
      ? { onError: (error: unknown) => deps.logError?.("webhook delivery loop failed", error) }
      : {}),
  });
}

function composeEngine(
  deps: PromptrunDeps,
  parts: Pick<
    EngineOptions,
    "clock" | "events" | "secrets" | "knowledge" | "onRunEnded" | "onPendingOutline"
  > & {
    dispatcher: ReturnType<typeof createWebhookDispatcher>;
  },
): RunEngine {
  const { dispatcher, ...shared } = parts;
  return createEngine({
    store: deps.store,
    config: deps.config,
    ...shared,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    buildWebhookDeliveries: (run) => dispatcher.buildDeliveries(run),
    ...(deps.modelOverrides !== undefined ? { models: deps.modelOverrides } : {}),
    ...(deps.metrics !== undefined ? { metrics: deps.metrics } : {}),
    ...(deps.cluster !== undefined ? { cluster: deps.cluster } : {}),
    ...(deps.logError !== undefined ? { logError: deps.logError } : {}),
  });
}

/** Knowledge bases (docs/KNOWLEDGE.md): one search (with its vector index), the service and the ingestion worker. */
function composeKnowledge(
  deps: PromptrunDeps,
  clock: Clock,
  rateLimits: RateLimitService,
  wakeDispatcher: () => void,
) {
  const { store, config } = deps;
  const parts = deps.knowledgeParts ?? createKnowledgeParts(config, deps.fetch);
  const search = createKnowledgeSearch({
    store: store.knowledge,
    resolveEmbeddingModel: parts.resolveEmbeddingModel,
  });
  const worker = createIngestionWorker({
    store: store.knowledge,
    config,
    clock,
    extract: parts.extract,
    chunk: parts.chunk,
    resolveEmbeddingModel: parts.resolveEmbeddingModel,
    buildOutbox: (tenantId) => documentOutboxBuilder({ store, clock, newId: () => uuidv7() }, tenantId),
    owner: deps.cluster?.owner ?? `promptrun-${uuidv7()}`,
    onEnded: wakeDispatcher,
    ...deps.ingestion,
    ...(deps.logError !== undefined ? { logError: deps.logError } : {}),
  });
  const service = createKnowledgeService({
    store: store.knowledge,
    config,
    clock,
    search,
    rateLimits,
    validateEmbeddingModel:
      parts.validateEmbeddingModel ??
      ((ref) => {
        parts.resolveEmbeddingModel(ref);
      }),
    detectMediaType: parts.detectMediaType,
    onDocumentAdded: () => worker.wake(),
    onKnowledgeBaseDeleted: (knowledgeBaseId) => search.forget(knowledgeBaseId),
  });
  return { search, worker, service };
}
