/**
 * Ports: what the engine needs from the outside world. `@promptrun/db` implements the stores
 * (SQLite now, Postgres later); fakes live in `./testing`. All store methods are async so a
 * networked database fits behind the same shape; SQLite implementations run them synchronously
 * inside one transaction each.
 */
import type {
  Citation,
  Cost,
  FinishReason,
  MemoryPart,
  Metadata,
  Page,
  Priority,
  PromptDefinition,
  RequiredAction,
  RunMemory,
  RunRetrieval,
  RunStatus,
  RunStep,
  ThreadEvent,
  TokenUsage,
  WebhookEventType,
  WorkflowRunLink,
} from "@promptrun/contract";
import type { KnowledgeStore } from "./knowledge/ports.ts";
import type { MemoryBound } from "./memory-window.ts";
import type { WorkflowStore } from "./workflows/ports.ts";

export interface Clock {
  now(): Date;
}

// ---------------------------------------------------------------- records

export interface TenantRecord {
  id: string;
  name: string;
  subscriptionActive: boolean;
  createdAt: Date;
}

/** A tenant as an API key authenticated it: stream tokens it mints name that key. */
export interface AuthenticatedTenant extends TenantRecord {
  apiKeyId?: string;
  /** The key's prefix: who moved a tag (docs/PRODUCT-RULES.md "Prompts over REST", tag history). */
  apiKeyPrefix?: string;
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  /** First characters of the key, shown to humans (`pr_live_abcd…`). */
  prefix: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  hash: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface PromptVersionRecord {
  id: string;
  promptId: string;
  tenantId: string;
  slug: string;
  version: number;
  definition: PromptDefinition;
  /** SHA-256 of the canonical JSON of `definition`: an identical push creates nothing. */
  contentHash: string;
  createdAt: Date;
}

export interface PromptRecord {
  id: string;
  tenantId: string;
  slug: string;
  latestVersion: number;
  /** The latest version's description (null when it has none). */
  description: string | null;
  /** tag → version number */
  tags: Record<string, number>;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A page of a tenant's prompts. `q`: case-insensitive substring of the slug or the latest
 * version's description (wildcards are literal); `tag`: only prompts having that tag.
 */
export interface PromptListPage {
  cursor?: string | null;
  limit: number;
  q?: string | null;
  tag?: string | null;
}

export type VersionSelector =
  | { kind: "id"; id: string }
  | { kind: "number"; version: number }
  | { kind: "latest" }
  | { kind: "tag"; tag: string };

export interface RunRecord {
  id: string;
  tenantId: string;
  threadId: string;
  channel: string;
  promptId: string;
  promptVersionId: string;
  promptSlug: string;
  promptVersion: number;
  priority: Priority;
  environment: string;
  status: RunStatus;
  inputs: Record<string, unknown>;
  metadata: Metadata;
  /** AES-256-GCM ciphertext of the run's envVars; erased (null) when the run ends. */
  encryptedEnvVars: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  output: string | null;
  error: string | null;
  tokenUsage: TokenUsage | null;
  cost: Cost | null;
  attempts: number;
  /** The parsed output of a prompt with an output schema; null otherwise or while pending. */
  outputJson: unknown;
  /** Why the last model call stopped; null while pending or when no call finished. */
  finishReason: FinishReason | null;
  /** History the run carried and dropped; null until the run has read its memory. */
  memoryWindow: RunMemory | null;
  /** Model calls that answered so far, in order (docs/TOOLS.md); [] before the first. */
  steps: RunStepRecord[];
  /** Set while the run waits for the caller's tool outputs (phase requires_action). */
  pause: RunPause | null;
  /** Knowledge-base searches made so far (docs/KNOWLEDGE.md); [] before the first. */
  retrieval: RunRetrieval[];
  /** The output's [n] markers that cite retrieved chunks; [] until the run completes. */
  citations: Citation[];
  /** The workflow run and step this run is a step of (docs/WORKFLOWS.md); absent or null otherwise. */
  workflowRun?: WorkflowRunLink | null | undefined;
}

/**
 * A step as stored: the contract's RunStep, how many run.token events it sent (the index goes on
 * across steps) and how many provider attempts it took. The last two are internal (not presented).
 */
export interface RunStepRecord extends RunStep {
  tokens: number;
  attempts: number;
}

/** A run paused for client tool outputs. `step` (the asking step's index) identifies this pause. */
export interface RunPause {
  step: number;
  requiredAction: RequiredAction;
  expiresAt: Date;
}

export type NewRun = Omit<
  RunRecord,
  | "status"
  | "startedAt"
  | "finishedAt"
  | "output"
  | "error"
  | "tokenUsage"
  | "cost"
  | "attempts"
  | "outputJson"
  | "finishReason"
  | "memoryWindow"
  | "steps"
  | "pause"
  | "retrieval"
  | "citations"
>;

export interface MemoryMessage {
  /** `tool`: the results of an assistant's tool calls (parts of type tool-result). */
  role: "user" | "assistant" | "tool";
  /** The message's text (for a message of parts: its text parts, joined). */
  content: string;
  /**
   * The parts when the message was more than text (images, files, an assistant's tool calls, a
   * tool message's results); absent otherwise.
   */
  parts?: MemoryPart[] | undefined;
}

/** A message given to a thread's import (POST /threads/{thread}/messages). */
export interface ImportedMessage {
  role: "user" | "assistant";
  content: string;
  externalId?: string | undefined;
  /** Absent: the import's time. */
  createdAt?: Date | undefined;
}

/** A run's memory read: the window, oldest first, and the channel's messages left out of it. */
export interface ThreadMemory {
  messages: MemoryMessage[];
  dropped: number;
}

export interface StoredMessage extends MemoryMessage {
  /** null for a message imported over REST (docs/PRODUCT-RULES.md "Thread memory"). */
  runId: string | null;
  /** The caller's id of an imported message, when it gave one. */
  externalId?: string | undefined;
  channel: string;
  createdAt: Date;
}

export interface RunCompletion {
  output: string;
  /** The parsed output when the prompt has an output schema, else null (absent: null). */
  outputJson?: unknown;
  finishReason?: FinishReason | null | undefined;
  memoryWindow?: RunMemory | null | undefined;
  tokenUsage: TokenUsage;
  cost: Cost;
  finishedAt: Date;
  /** The exchange appended to the (thread, channel) memory in the same transaction. */
  memory: MemoryMessage[];
  /** Webhook outbox rows written in the same transaction (durable, at-least-once). */
  deliveries: WebhookDeliveryRecord[];
  /** Every step of the run (replaces what saveSteps stored). */
  steps: RunStepRecord[];
  /** Every search of the run (replaces what was stored); absent: what is stored is kept. */
  retrieval?: RunRetrieval[] | undefined;
  /** Absent: []. */
  citations?: Citation[] | undefined;
}

export interface RunFailure {
  error: string;
  /** Of the last model call, when one finished (e.g. an answer that failed its schema). */
  finishReason?: FinishReason | null | undefined;
  memoryWindow?: RunMemory | null | undefined;
  cost: Cost | null;
  finishedAt: Date;
  deliveries: WebhookDeliveryRecord[];
  /** The run's steps when known (absent: what is stored is kept). */
  steps?: RunStepRecord[] | undefined;
  /** The run's searches when known (absent: what is stored is kept). */
  retrieval?: RunRetrieval[] | undefined;
  /**
   * Set: fail only a run still paused at this step (a pause that expired), so that a resume
   * and an expiry never both win. Absent: any pending run.
   */
  pausedStep?: number | undefined;
}

/** A pause as it ends: the steps with the caller's outputs filled in. */
export interface RunResumption {
  /** The pause being answered (RunPause.step): a pause answered already, or another one, is not resumed. */
  step: number;
  steps: RunStepRecord[];
}

/** Narrows a run list; every field optional, combined with AND (docs/PRODUCT-RULES.md "Listing runs"). */
export interface RunListFilter {
  threadId?: string;
  channel?: string;
  slug?: string;
  /** The prompt version number (meaningful with `slug`). */
  version?: number;
  status?: RunStatus;
  /** queued = pending, not started; running = pending, started, not paused; requires_action = paused. */
  phase?: "queued" | "running" | "requires_action";
  environment?: string;
  /** Each key's value must equal the string, or be an array containing it. */
  metadata?: Record<string, string>;
  /** createdAt >= createdAfter. */
  createdAfter?: Date;
  /** createdAt < createdBefore. */
  createdBefore?: Date;
}

/** Usage report grouping (docs/PRODUCT-RULES.md "Usage"). */
export type UsageGroupBy = "day" | "prompt" | "model" | "environment";

export interface UsageQuery {
  from: Date;
  to: Date;
  groupBy: UsageGroupBy;
  environment?: string;
  slug?: string;
}

/** One group of ended runs: counts and the sums of their token usage and cost (USD). */
export interface UsageRow {
  key: string;
  runs: number;
  completed: number;
  failed: number;
  tokenUsage: TokenUsage;
  cost: { success: number; retries: number; total: number };
  /** Ended runs whose cost was absent or marked unpriced. */
  unpricedRuns: number;
}

export interface IdempotencyRecord {
  tenantId: string;
  key: string;
  requestHash: string;
  runId: string;
  threadId: string;
  createdAt: Date;
}

export interface EnvironmentRecord {
  id: string;
  tenantId: string;
  name: string;
  createdAt: Date;
}

export interface WebhookRecord {
  id: string;
  tenantId: string;
  environmentId: string;
  environment: string;
  url: string;
  /** Encrypted `whsec_…` secret. */
  encryptedSecret: string;
  events: WebhookEventType[];
  enabled: boolean;
  failureStreak: number;
  createdAt: Date;
}

export interface WebhookDeliveryRecord {
  /** Also the `webhook-id` header: the same on every attempt. */
  id: string;
  webhookId: string;
  tenantId: string;
  /** The run of a run event; null for a prompt event. */
  runId: string | null;
  /**
   * The prompt event (prompt.version.created, prompt.tag.moved) this delivers; null for a run
   * event. Its body is stored once per event (docs/PRODUCT-RULES.md "Environments, env vars and webhooks").
   */
  eventId: string | null;
  eventType: WebhookEventType;
  /** The exact JSON body that is signed and sent. */
  payload: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/**
 * A delivery as the outbox reads it: without its body, which is stored once per (run, event) and
 * loaded only when sending (WebhookStore.getPayload).
 */
export type WebhookDeliveryState = Omit<WebhookDeliveryRecord, "payload">;

export interface WebhookAttemptRecord {
  id: string;
  deliveryId: string;
  attempt: number;
  attemptedAt: Date;
  responseStatus: number | null;
  latencyMs: number | null;
  error: string | null;
}

// ---------------------------------------------------------------- stores

export interface StreamAccess {
  subscriptionActive: boolean;
  keyLive: boolean;
}

export interface TenantStore {
  create(tenant: TenantRecord): Promise<void>;
  get(id: string): Promise<TenantRecord | null>;
  list(): Promise<TenantRecord[]>;
  setSubscription(id: string, active: boolean): Promise<boolean>;
  createApiKey(key: ApiKeyRecord): Promise<void>;
  /** Looks an unrevoked key up by its hash (a revoked key is never found); the caller compares in constant time. */
  findApiKeyByHash(hash: string): Promise<{ key: ApiKeyRecord; tenant: TenantRecord } | null>;
  listApiKeys(tenantId: string): Promise<ApiKeyRecord[]>;
  /**
   * What a stream token still grants, in one lookup (checked at every connect): null for an
   * unknown tenant; `keyLive` is false when the named key is revoked, unknown or another
   * tenant's, and true when no key is named.
   */
  accessOf(tenantId: string, apiKeyId?: string): Promise<StreamAccess | null>;
  /** Revokes by id, or by prefix when unique; returns the revoked keys. */
  revokeApiKeys(match: { id?: string; prefix?: string }, at: Date): Promise<ApiKeyRecord[]>;
}

/** A guarded tag move (docs/PRODUCT-RULES.md "Prompts over REST", tag moves). */
export interface TagMoveInput {
  tenantId: string;
  slug: string;
  tag: string;
  version: number;
  /** Absent: no guard. A number: the tag must point there now. null: the tag must not exist yet. */
  expectedVersion?: number | null;
  at: Date;
  /** Recorded in the tag history: the API key's prefix, or `cli`. */
  movedBy: string;
  /** The move's webhook outbox rows, written in its transaction (see PromptOutbox). */
  outbox?: PromptOutbox<{ version: PromptVersionRecord; previousVersion: number | null }>;
}

/**
 * Builds the webhook outbox rows of a prompt write from what the store decided inside the write's
 * transaction (the version number, created or not); the store writes them in that same
 * transaction (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"). Synchronous, so the
 * SQLite store can call it inside its synchronous transaction.
 */
export type PromptOutbox<Written> = (written: Written) => WebhookDeliveryRecord[];

/** One move of a tag; `version` null records a delete. */
export interface TagHistoryRecord {
  version: number | null;
  previousVersion: number | null;
  movedAt: Date;
  movedBy: string;
}

export type TagMoveOutcome =
  | { outcome: "moved"; version: PromptVersionRecord; previousVersion: number | null }
  | { outcome: "conflict"; current: number | null }
  | { outcome: "missing" };

export interface PromptStore {
  /**
   * Atomically: creates the prompt if new; if the newest version's contentHash equals the given
   * one, returns it with created=false; otherwise inserts version max+1. Then points `tags` at
   * the resulting version.
   */
  pushVersion(input: {
    tenantId: string;
    slug: string;
    definition: PromptDefinition;
    contentHash: string;
    tags: string[];
    newPromptId: string;
    newVersionId: string;
    at: Date;
    /** Who moves the file's tags, for the tag history (default `cli`). */
    movedBy?: string;
    /** The push's webhook outbox rows, written in its transaction. */
    outbox?: PromptOutbox<{ version: PromptVersionRecord; created: boolean }>;
  }): Promise<{ version: PromptVersionRecord; created: boolean; tags: string[] }>;
  setTag(
    tenantId: string,
    slug: string,
    selector: VersionSelector,
    tag: string,
    at: Date,
    movedBy?: string,
    /** The move's webhook outbox rows, written in its transaction (only when the version exists). */
    outbox?: PromptOutbox<PromptVersionRecord>,
  ): Promise<PromptVersionRecord | null>;
  /** Compare-and-set in one transaction: the guard is checked against the tag's current version. */
  moveTag(input: TagMoveInput): Promise<TagMoveOutcome>;
  /** Removes the tag; returns the version it pointed at, or null when the prompt or tag is unknown. */
  deleteTag(tenantId: string, slug: string, tag: string, at: Date, movedBy: string): Promise<number | null>;
  /**
   * The tag's moves, newest first (every move of a tag changes its version and is recorded in
   * the move's transaction). An unknown prompt or tag gives an empty page.
   */
  listTagHistory(
    tenantId: string,
    slug: string,
    tag: string,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<TagHistoryRecord>>;
  resolveVersion(
    tenantId: string,
    slug: string,
    selector: VersionSelector,
  ): Promise<PromptVersionRecord | null>;
  getPrompt(tenantId: string, slug: string): Promise<PromptRecord | null>;
  /** Slug order; `q` and `tag` narrow the list (docs/PRODUCT-RULES.md "Prompts over REST"). */
  listPrompts(tenantId: string, page: PromptListPage): Promise<Page<PromptRecord>>;
  listVersions(
    tenantId: string,
    slug: string,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<PromptVersionRecord>>;
  /** Tags pointing at a version. */
  tagsOf(versionId: string): Promise<string[]>;
  /** Versions of all the tenant's prompts together (the prompt-version quota). */
  countVersions(tenantId: string): Promise<number>;
}

/** A place in a class's pending runs: (createdAt, id), the order listPendingPage pages in. */
export interface PendingCursor {
  createdAt: Date;
  id: string;
}

export interface PendingOutlineRow {
  tenantId: string;
  priority: Priority;
  count: number;
}

export interface PendingPageRow {
  run: RunRecord;
  /** The pending run just before it in its (tenant, thread, channel), or null. */
  channelPredecessor: string | null;
}

export interface RunStore {
  /**
   * Durably inserts the run (and its thread if new) and, when given, the idempotency record,
   * in one transaction committed with full durability before it resolves. Rejects with
   * PromptrunError("conflict") if the idempotency key was taken meanwhile. An existing record of
   * the key created before `options.idempotencyExpiredBefore` has expired: it is replaced instead.
   */
  create(
    run: NewRun,
    idempotency?: IdempotencyRecord,
    options?: { idempotencyExpiredBefore?: Date },
  ): Promise<void>;
  get(tenantId: string, id: string): Promise<RunRecord | null>;
  /** By id alone, for the engine. */
  getById(id: string): Promise<RunRecord | null>;
  list(
    tenantId: string,
    filter: RunListFilter,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<RunRecord>>;
  /** Ended runs created in [from, to), grouped, ordered by key (SQL GROUP BY; bounded by the groups). */
  usage(tenantId: string, query: UsageQuery): Promise<UsageRow[]>;
  /** Every run still pending, oldest first (key rotation, tests; the engine pages instead). */
  listPending(): Promise<RunRecord[]>;
  /**
   * How many runs are pending per tenant and priority class, paused ones included (the engine's
   * frontier, docs/ARCHITECTURE.md "Pending runs in memory"). Served by an index, not the rows.
   */
  pendingOutline(): Promise<PendingOutlineRow[]>;
  /** The pending runs paused for tool outputs, oldest first (they hold their channels). */
  listPaused(): Promise<RunRecord[]>;
  /**
   * The tenant's pending, not paused runs of one class after `after` in (createdAt, id) order,
   * each with the id of the pending run just before it in its channel (null: it is the head).
   */
  listPendingPage(
    tenantId: string,
    priority: Priority,
    after: PendingCursor | null,
    limit: number,
  ): Promise<PendingPageRow[]>;
  markStarted(id: string, at: Date, attempts: number): Promise<void>;
  /** pending → completed, and the memory rows, in one transaction. false if it had already ended. */
  complete(id: string, completion: RunCompletion): Promise<boolean>;
  /** pending → failed. false if it had already ended (or, with pausedStep, is no longer paused there). */
  fail(id: string, failure: RunFailure): Promise<boolean>;
  /**
   * Stores the steps of a pending run (after a model call, after its server tools ran), so a
   * restart never sends a finished step to the model again; with `retrieval`, also the run's
   * searches (a restart reuses them instead of searching again). false if the run has ended.
   */
  saveSteps(id: string, steps: RunStepRecord[], retrieval?: RunRetrieval[]): Promise<boolean>;
  /**
   * Pending and not paused → paused, in one transaction: the steps, the pause, the lease freed
   * (a paused run holds no slot) and the webhook outbox rows (run.requires_action). false if the
   * run has ended or is paused already.
   */
  pause(
    id: string,
    paused: {
      steps: RunStepRecord[];
      pause: RunPause;
      deliveries: WebhookDeliveryRecord[];
      /** The run's searches so far (absent: what is stored is kept). */
      retrieval?: RunRetrieval[] | undefined;
    },
  ): Promise<boolean>;
  /**
   * Paused at `resumption.step` → runnable (pause cleared, steps with the caller's outputs), and
   * the idempotency record when given, in one transaction. false when the run is not paused at
   * that step (ended, answered already, or paused again later). Rejects with
   * PromptrunError("conflict") when the idempotency key was taken meanwhile (as create).
   */
  resume(
    id: string,
    resumption: RunResumption,
    idempotency?: IdempotencyRecord,
    options?: { idempotencyExpiredBefore?: Date },
  ): Promise<boolean>;
  /** Paused runs whose pause expired at or before `now`, earliest expiry first (served by an index). */
  listExpiredPauses(now: Date, limit: number): Promise<RunRecord[]>;
  /**
   * Completed exchanges of (tenant, thread, channel), oldest first: the newest whole exchanges
   * within the bound (default DEFAULT_MEMORY_BOUND), read through the messages index, and how
   * many of the channel's messages were left out (core/src/memory-window.ts).
   */
  memory(tenantId: string, threadId: string, channel: string, bound?: MemoryBound): Promise<ThreadMemory>;
  /**
   * The history a run carried (docs/PRODUCT-RULES.md "Run messages"): the newest `limit` messages
   * of its (tenant, thread, channel) before its exchange, oldest first. Its exchange starts at the
   * channel's first message written by the run or by a later run of the channel (in channel order,
   * createdAt then id: a later run executes after this one ended, so its messages never precede
   * this one's memory read); with none, the newest messages. Read through the messages index.
   */
  messagesBeforeRun(
    run: Pick<RunRecord, "id" | "tenantId" | "threadId" | "channel" | "createdAt">,
    limit: number,
  ): Promise<MemoryMessage[]>;
  getThread(
    tenantId: string,
    threadId: string,
  ): Promise<{ id: string; createdAt: Date; messages: StoredMessage[] } | null>;
  /** A channel's messages, oldest first (keyset on insertion order; invalid cursor: `invalid`). */
  listMessages(
    tenantId: string,
    threadId: string,
    channel: string,
    page: { cursor?: string | null; limit: number },
  ): Promise<{ items: StoredMessage[]; nextCursor: string | null }>;
  /**
   * Appends imported messages to a channel's memory in one transaction, creating the thread;
   * a message whose externalId the channel already holds (or an earlier one of the batch) is skipped.
   */
  importMessages(
    tenantId: string,
    threadId: string,
    channel: string,
    messages: readonly ImportedMessage[],
    now: Date,
  ): Promise<{ imported: number; skipped: number }>;
  findIdempotency(tenantId: string, key: string, notBefore: Date): Promise<IdempotencyRecord | null>;
  countPending(tenantId: string): Promise<number>;
  /** Key rotation of pending runs' envVars. */
  updateEncryptedEnvVars(id: string, encryptedEnvVars: string): Promise<void>;

  // ------------------------------------------------ leases (several instances on one database)

  /**
   * Leases a run to `owner` until `leaseUntil`, atomically. Succeeds only if the run is pending,
   * its lease is free, expired (≤ now) or already `owner`'s, no earlier pending run exists in the
   * same (tenant, thread, channel) (strict channel order across instances; see
   * `ignoreChannelOrder`), it is not paused (unless `ignoreChannelOrder`), and, with
   * `tenantLimit`, fewer than that many other runs of the tenant hold a live lease (per-tenant
   * concurrency across instances).
   */
  claim(id: string, owner: string, leaseUntil: Date, now: Date, options?: RunClaimOptions): Promise<boolean>;
  /**
   * Extends `owner`'s leases of the given pending runs. `renewed`: the ids still held (a missing
   * one was ended or taken over); `cancelRequested`: those of them with a pending cancel request.
   */
  renewLeases(owner: string, ids: string[], leaseUntil: Date): Promise<LeaseRenewal>;
  /** Frees `owner`'s lease of a run (stopped here without ending); no-op when not held. */
  releaseLease(id: string, owner: string): Promise<void>;
  /**
   * Runs another instance may claim now: pending, not paused, lease free or expired (≤ now), heads of their
   * channel (no earlier pending run in the same tenant, thread and channel). Oldest first within
   * each priority class, at most `limit` of each class; served by indexes whatever the backlog.
   * With `tenantLimit`, runs of tenants already holding that many live leases are left out.
   */
  listClaimable(now: Date, limit: number, options?: { tenantLimit?: number }): Promise<RunRecord[]>;
  /**
   * Records a cancel request for a pending run (the instance executing it aborts the provider call
   * when it sees it); false when the run is unknown or has ended.
   */
  requestCancel(id: string, at: Date): Promise<boolean>;
}

export interface RunClaimOptions {
  /** Most runs of the tenant holding a live lease at once, this one included. */
  tenantLimit?: number;
  /** Claim even when an earlier run of the channel is pending, or the run is paused: only to end a run being cancelled. */
  ignoreChannelOrder?: boolean;
}

export interface LeaseRenewal {
  renewed: string[];
  cancelRequested: string[];
}

export interface EnvironmentStore {
  /** Creates `name` for the tenant if missing; returns it. */
  ensure(tenantId: string, name: string, newId: string, at: Date): Promise<EnvironmentRecord>;
  get(tenantId: string, name: string): Promise<EnvironmentRecord | null>;
  list(tenantId: string): Promise<EnvironmentRecord[]>;
  /** key → encrypted value */
  getEnvVars(environmentId: string): Promise<Record<string, string>>;
  setEnvVars(environmentId: string, encryptedValues: Record<string, string>, at: Date): Promise<void>;
  unsetEnvVars(environmentId: string, keys: string[]): Promise<void>;
  /** Every encrypted value (key rotation). */
  allEncryptedValues(): Promise<Array<{ environmentId: string; key: string; value: string }>>;
}

export interface WebhookStore {
  create(webhook: WebhookRecord): Promise<void>;
  get(tenantId: string, id: string): Promise<WebhookRecord | null>;
  list(tenantId: string): Promise<WebhookRecord[]>;
  listForEnvironment(environmentId: string): Promise<WebhookRecord[]>;
  setEnabled(id: string, enabled: boolean): Promise<void>;
  delete(tenantId: string, id: string): Promise<boolean>;
  /**
   * Stores deliveries; their payloads once per (run, event): deliveries of one run event carry
   * the same payload, and a payload already stored for it is kept.
   */
  enqueueDeliveries(deliveries: WebhookDeliveryRecord[]): Promise<void>;
  /**
   * Pending deliveries whose nextAttemptAt ≤ now and whose lease is free or expired, oldest
   * first, without their payloads. With `perWebhook`, only each webhook's first that many (so one
   * webhook's backlog cannot fill the read).
   */
  dueDeliveries(now: Date, limit: number, options?: { perWebhook?: number }): Promise<WebhookDeliveryState[]>;
  /** The body of a run's webhook event, or null when none was stored. */
  getPayload(runId: string, eventType: WebhookEventType): Promise<string | null>;
  /** The body of a prompt event's deliveries (by their eventId), or null when none was stored. */
  getEventPayload(eventId: string): Promise<string | null>;
  /**
   * Leases a due delivery to `owner` until `leaseUntil` so that no other instance sends it
   * meanwhile: true only if it is pending, due (nextAttemptAt ≤ now) and its lease is free or
   * expired. recordAttempt and requeue free the lease.
   */
  claimDelivery(id: string, owner: string, leaseUntil: Date, now: Date): Promise<boolean>;
  recordAttempt(
    attempt: WebhookAttemptRecord,
    outcome: {
      status: WebhookDeliveryRecord["status"];
      nextAttemptAt: Date | null;
      failureStreak: number;
      disable: boolean;
    },
  ): Promise<void>;
  listAttempts(
    tenantId: string,
    filter: { webhookId?: string; runId?: string; limit: number },
  ): Promise<
    Array<WebhookAttemptRecord & { webhookId: string; runId: string | null; eventType: WebhookEventType }>
  >;
  getDelivery(tenantId: string, id: string): Promise<WebhookDeliveryState | null>;
  /** Manual redelivery: back to pending, due now. */
  requeue(id: string, at: Date): Promise<void>;
  /** Key rotation: every webhook's encrypted secret. */
  allEncryptedSecrets(): Promise<Array<{ id: string; encryptedSecret: string }>>;
  updateEncryptedSecret(id: string, encryptedSecret: string): Promise<void>;
}

/**
 * A signed-in web console (docs/console.md "Serving and sign-in"): the cookie's token is never
 * stored, only its SHA-256.
 */
export interface ConsoleSessionRecord {
  /** SHA-256 hex of the cookie's token: the session's key. */
  tokenHash: string;
  tenantId: string;
  /** The API key signed in with: revoking it ends the session; tag moves name it. */
  apiKeyId: string;
  createdAt: Date;
  /** Written at most once a minute while the session is used (idle expiry). */
  lastSeenAt: Date;
  /** createdAt + the longest a session lasts, however busy. */
  expiresAt: Date;
}

/** A session as authentication reads it: with its tenant and its API key (revoked or not), in one query. */
export interface FoundConsoleSession {
  session: ConsoleSessionRecord;
  tenant: TenantRecord;
  key: ApiKeyRecord;
}

export interface ConsoleSessionStore {
  /**
   * Inserts the session, then ends its key's oldest sessions beyond `maxPerKey` (newest kept), in
   * one transaction. A session of an unknown tenant or key is invalid; a duplicate hash a conflict.
   */
  create(session: ConsoleSessionRecord, options: { maxPerKey: number }): Promise<void>;
  /**
   * The session of `tokenHash` joined with its tenant and key, whatever its state (expired, idle,
   * key revoked): the caller decides. One query, never cached, so a revocation counts at once.
   */
  find(tokenHash: string): Promise<FoundConsoleSession | null>;
  /** Moves lastSeenAt forward to `at` (never back); no-op for an unknown session. */
  touch(tokenHash: string, at: Date): Promise<void>;
  /** Deletes the session; false when there was none. */
  delete(tokenHash: string): Promise<boolean>;
  /**
   * Deletes every ended session: expiresAt ≤ `now`, lastSeenAt ≤ `idleBefore`, or its key revoked.
   * Returns how many.
   */
  deleteEnded(now: Date, idleBefore: Date): Promise<number>;
}

export interface Store {
  tenants: TenantStore;
  prompts: PromptStore;
  runs: RunStore;
  environments: EnvironmentStore;
  webhooks: WebhookStore;
  consoleSessions: ConsoleSessionStore;
  knowledge: KnowledgeStore;
  workflows: WorkflowStore;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- events

export interface DeliveredThreadEvent {
  /** SSE id; strictly increasing within a thread. */
  id: string;
  event: ThreadEvent;
}

export type ReplayResult = { kind: "replayed"; events: DeliveredThreadEvent[] } | { kind: "reset" };

export interface ThreadSubscription {
  replay: ReplayResult | null;
  /**
   * Id of the newest event the bus had seen when this subscription began (never empty): a
   * Last-Event-ID equal to it replays exactly the events delivered since. Control events that
   * carry no event of their own (`ready`, `reset`) use it as their SSE id.
   */
  position: string;
  unsubscribe: () => void;
}

/**
 * Per-thread event fan-out with a bounded replay buffer: in-process (one instance) or over Redis
 * (several instances, `@promptrun/db`).
 */
export interface ThreadEventBus {
  publish(tenantId: string, threadId: string, event: ThreadEvent): void;
  /**
   * Subscribes to live events. With `lastEventId`, first returns the buffered events after it
   * (or `reset` when it is older than the buffer).
   */
  subscribe(
    tenantId: string,
    threadId: string,
    listener: (event: DeliveredThreadEvent) => void,
    options?: { lastEventId?: string | null },
  ): ThreadSubscription;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- cluster

/**
 * Notifications between instances sharing one store (Redis pub/sub in `@promptrun/db`). Only a
 * speed-up: without them, polling finds new work and the lease renewal sees cancel requests.
 */
export interface ClusterSignals {
  /** Runs may have become claimable (one was created, a channel or a tenant slot was freed). */
  announceWork(): void;
  /** Asks whichever instance executes `runId` to abort it (the cancel request is already stored). */
  announceCancel(runId: string): void;
  /** Registers handlers for the announcements of every instance (this one included). */
  listen(handlers: { onWork(): void; onCancel(runId: string): void }): () => void;
}
