/**
 * SQLite schema (drizzle sqlite-core). drizzle-kit reads this file to generate the migrations in
 * ../../drizzle, so it must not import `bun:sqlite`. Timestamps are epoch ms, ids UUID text,
 * JSON documents text; the column helpers in ./sqlite-columns.ts hold those choices.
 */
import type {
  Citation,
  Cost,
  DocumentMediaType,
  DocumentStatus,
  FinishReason,
  MemoryPart,
  Metadata,
  Priority,
  PromptDefinition,
  RequiredAction,
  RunMemory,
  RunRetrieval,
  RunStatus,
  TokenUsage,
  WebhookEventType,
  WorkflowDefinition,
  WorkflowRunStatus,
} from "@promptrun/contract";
import type { DocumentCost, RunStepRecord } from "@promptrun/core";
import { sql } from "drizzle-orm";
import {
  blob,
  foreignKey,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import type { StoredWorkflowStep } from "../shared/workflow-records.ts";
import { count, decimal, epochMs, flag, jsonText, uuid } from "./sqlite-columns.ts";

export const tenants = sqliteTable("tenants", {
  id: uuid("id").primaryKey(),
  name: text("name").notNull(),
  subscriptionActive: flag("subscription_active").notNull().default(true),
  createdAt: epochMs("created_at").notNull(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    prefix: text("prefix").notNull(),
    /** SHA-256 hex of the key; the key itself is never stored. */
    hash: text("hash").notNull(),
    createdAt: epochMs("created_at").notNull(),
    revokedAt: epochMs("revoked_at"),
    lastUsedAt: epochMs("last_used_at"),
  },
  (table) => [
    uniqueIndex("api_keys_hash_unique").on(table.hash),
    index("api_keys_prefix_idx").on(table.prefix),
    index("api_keys_tenant_idx").on(table.tenantId),
  ],
);

export const prompts = sqliteTable(
  "prompts",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    slug: text("slug").notNull(),
    latestVersion: count("latest_version").notNull().default(0),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [uniqueIndex("prompts_tenant_slug_unique").on(table.tenantId, table.slug)],
);

export const promptVersions = sqliteTable(
  "prompt_versions",
  {
    id: uuid("id").primaryKey(),
    promptId: uuid("prompt_id")
      .notNull()
      .references(() => prompts.id),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    version: count("version").notNull(),
    definition: jsonText<PromptDefinition>("definition").notNull(),
    contentHash: text("content_hash").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [uniqueIndex("prompt_versions_prompt_version_unique").on(table.promptId, table.version)],
);

export const promptTags = sqliteTable(
  "prompt_tags",
  {
    promptId: uuid("prompt_id")
      .notNull()
      .references(() => prompts.id),
    tag: text("tag").notNull(),
    versionId: uuid("version_id")
      .notNull()
      .references(() => promptVersions.id),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.promptId, table.tag] }),
    index("prompt_tags_version_idx").on(table.versionId),
  ],
);

/**
 * Every move of a tag, newest last (docs/PRODUCT-RULES.md "Prompts over REST", tag history):
 * `version` null records a delete; `moved_by` is the API key's prefix or `cli`.
 */
export const promptTagHistory = sqliteTable(
  "prompt_tag_history",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    promptId: uuid("prompt_id")
      .notNull()
      .references(() => prompts.id),
    tag: text("tag").notNull(),
    version: count("version"),
    previousVersion: count("previous_version"),
    movedAt: epochMs("moved_at").notNull(),
    movedBy: text("moved_by").notNull(),
  },
  (table) => [
    index("prompt_tag_history_tag_idx").on(
      table.tenantId,
      table.promptId,
      table.tag,
      sql`${table.movedAt} desc`,
      sql`${table.id} desc`,
    ),
  ],
);

export const threads = sqliteTable(
  "threads",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    id: uuid("id").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.tenantId, table.id] })],
);

export const runs = sqliteTable(
  "runs",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    threadId: uuid("thread_id").notNull(),
    channel: text("channel").notNull(),
    promptId: uuid("prompt_id")
      .notNull()
      .references(() => prompts.id),
    promptVersionId: uuid("prompt_version_id")
      .notNull()
      .references(() => promptVersions.id),
    promptSlug: text("prompt_slug").notNull(),
    promptVersion: count("prompt_version").notNull(),
    priority: text("priority").$type<Priority>().notNull(),
    environment: text("environment").notNull(),
    status: text("status").$type<RunStatus>().notNull(),
    inputs: jsonText<Record<string, unknown>>("inputs").notNull(),
    metadata: jsonText<Metadata>("metadata").notNull(),
    /** AES-256-GCM ciphertext of the run's envVars; NULL once the run has ended. */
    encryptedEnvVars: text("encrypted_env_vars"),
    createdAt: epochMs("created_at").notNull(),
    startedAt: epochMs("started_at"),
    finishedAt: epochMs("finished_at"),
    output: text("output"),
    error: text("error"),
    tokenUsage: jsonText<TokenUsage>("token_usage"),
    cost: jsonText<Cost>("cost"),
    /** The parsed output of a prompt with an output schema (JSON text; NULL otherwise). */
    outputJson: jsonText<unknown>("output_json"),
    /** Why the last model call stopped (contract FinishReason); NULL before the run ends. */
    finishReason: text("finish_reason").$type<FinishReason>(),
    /** History messages the run carried and dropped (docs/PRODUCT-RULES.md "Thread memory"). */
    memoryWindow: jsonText<RunMemory>("memory_window"),
    attempts: count("attempts").notNull().default(0),
    /** Instance executing the run, when several share the database; NULL when free. */
    leaseOwner: text("lease_owner"),
    /** The lease lapses at this time unless renewed: another instance may then take the run over. */
    leaseUntil: epochMs("lease_until"),
    /** A cancel request the owning instance has yet to act on (it aborts the provider call). */
    cancelRequestedAt: epochMs("cancel_requested_at"),
    /**
     * The model calls that answered so far (JSON array, docs/ARCHITECTURE.md "Run storage"):
     * written once per model call, read with the run.
     */
    steps: jsonText<RunStepRecord[]>("steps").notNull().default(sql`'[]'`),
    /**
     * The run's knowledge-base searches and its output's citations (docs/KNOWLEDGE.md). A create
     * never names them (the column default), so the hot insert is unchanged.
     */
    retrieval: jsonText<RunRetrieval[]>("retrieval").notNull().default(sql`'[]'`),
    citations: jsonText<Citation[]>("citations").notNull().default(sql`'[]'`),
    /** The client tool calls a paused run waits for (contract RequiredAction); NULL unless paused. */
    requiredAction: jsonText<RequiredAction>("required_action"),
    /** The asking step's index while paused, else NULL: the compare-and-set token of a resume or an expiry. */
    pausedStep: count("paused_step"),
    /** When a paused run fails for want of tool outputs; NULL unless paused. */
    pauseExpiresAt: epochMs("pause_expires_at"),
    /**
     * The workflow run and step this run is a step of (docs/WORKFLOWS.md); NULL for an ordinary
     * run, so a create binds two nulls and its partial index is not written.
     */
    workflowRunId: uuid("workflow_run_id"),
    workflowStep: text("workflow_step"),
  },
  (table) => [
    foreignKey({ columns: [table.tenantId, table.threadId], foreignColumns: [threads.tenantId, threads.id] }),
    index("runs_tenant_created_idx").on(table.tenantId, table.createdAt, table.id),
    index("runs_tenant_thread_idx").on(table.tenantId, table.threadId, table.createdAt, table.id),
    // A tenant's pending runs per priority class, oldest first: the engine pages its frontier from
    // it (listPendingPage) and counts them (pendingOutline, countPending) without the rows.
    index("runs_pending_idx")
      .on(table.tenantId, table.priority, table.createdAt, table.id)
      .where(sql`${table.status} = 'pending'`),
    // Run lists (docs/PRODUCT-RULES.md "Listing runs"): a prompt's runs newest first, and the
    // failed runs (partial: a create never writes it, only a failing run does).
    index("runs_tenant_slug_idx").on(table.tenantId, table.promptSlug, table.createdAt, table.id),
    index("runs_failed_idx")
      .on(table.tenantId, table.createdAt, table.id)
      .where(sql`${table.status} = 'failed'`),
    // SQLite serves one instance, which never polls the shared queue: the Postgres schema's
    // runs_queue_idx and runs_channel_queue_idx would only slow every create (by about a quarter,
    // measured), so listClaimable here leans on runs_pending_idx and runs_tenant_thread_idx.
    // The live leases of a tenant (per-tenant concurrency across instances; empty unless leased).
    index("runs_leased_idx")
      .on(table.tenantId, table.leaseUntil)
      .where(sql`${table.status} = 'pending' and ${table.leaseOwner} is not null`),
    // Paused runs by expiry (listExpiredPauses); partial, so a create never writes it.
    index("runs_paused_idx").on(table.pauseExpiresAt, table.id).where(sql`${table.pausedStep} is not null`),
    // A workflow run's step runs (orphan sweep); partial, so an ordinary create never writes it.
    index("runs_workflow_run_idx").on(table.workflowRunId).where(sql`${table.workflowRunId} is not null`),
  ],
);

/** Thread memory: the exchanges of completed runs, in insertion order (`seq`). */
export const messages = sqliteTable(
  "messages",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    tenantId: uuid("tenant_id").notNull(),
    threadId: uuid("thread_id").notNull(),
    channel: text("channel").notNull(),
    /** The run that wrote the message; null for a message imported over REST (docs/PRODUCT-RULES.md "Thread memory"). */
    runId: uuid("run_id").references(() => runs.id),
    /** The caller's id of an imported message: a repeat within (tenant, thread, channel) is skipped. */
    externalId: text("external_id"),
    role: text("role").$type<"user" | "assistant" | "tool">().notNull(),
    content: text("content").notNull(),
    /**
     * The parts (JSON) when the message was more than text (images, files, an assistant's tool
     * calls, a tool message's results); `content` then holds its text.
     */
    parts: jsonText<MemoryPart[]>("parts"),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [
    foreignKey({ columns: [table.tenantId, table.threadId], foreignColumns: [threads.tenantId, threads.id] }),
    index("messages_thread_channel_idx").on(table.tenantId, table.threadId, table.channel, table.seq),
    uniqueIndex("messages_external_id_idx")
      .on(table.tenantId, table.threadId, table.channel, table.externalId)
      .where(sql`${table.externalId} IS NOT NULL`),
  ],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    runId: uuid("run_id")
      .notNull()
      .references(() => runs.id),
    threadId: uuid("thread_id").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.tenantId, table.key] })],
);

export const environments = sqliteTable(
  "environments",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [uniqueIndex("environments_tenant_name_unique").on(table.tenantId, table.name)],
);

export const envVars = sqliteTable(
  "env_vars",
  {
    environmentId: uuid("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** AES-256-GCM ciphertext. */
    value: text("value").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.environmentId, table.key] })],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    environmentId: uuid("environment_id")
      .notNull()
      .references(() => environments.id),
    url: text("url").notNull(),
    encryptedSecret: text("encrypted_secret").notNull(),
    events: jsonText<WebhookEventType[]>("events").notNull(),
    enabled: flag("enabled").notNull().default(true),
    failureStreak: count("failure_streak").notNull().default(0),
    createdAt: epochMs("created_at").notNull(),
    /** Soft delete: the delivery and attempt history keeps pointing at the row. */
    deletedAt: epochMs("deleted_at"),
  },
  (table) => [
    index("webhooks_tenant_idx").on(table.tenantId),
    index("webhooks_environment_idx").on(table.environmentId),
  ],
);

/**
 * The body of a run's webhook event, stored once per (run, event) however many webhooks receive
 * it; deliveries reference it by (run_id, event_type) and the dispatcher loads it only to send.
 */
export const webhookPayloads = sqliteTable(
  "webhook_payloads",
  {
    runId: uuid("run_id")
      .notNull()
      .references(() => runs.id),
    eventType: text("event_type").$type<WebhookEventType>().notNull(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** The exact JSON body that is signed and sent. */
    payload: text("payload").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.runId, table.eventType] })],
);

/**
 * The body of a prompt event (prompt.version.created, prompt.tag.moved), stored once however many
 * webhooks receive it; deliveries reference it by event_id.
 */
export const webhookEvents = sqliteTable("webhook_events", {
  id: uuid("id").primaryKey(),
  tenantId: uuid("tenant_id")
    .notNull()
    .references(() => tenants.id),
  eventType: text("event_type").$type<WebhookEventType>().notNull(),
  /** The exact JSON body that is signed and sent. */
  payload: text("payload").notNull(),
  createdAt: epochMs("created_at").notNull(),
});

/**
 * Durable outbox: one row per (webhook, event), retried until delivered or failed. A run event's
 * body is the webhook_payloads row of the same (run_id, event_type); a prompt event's (run_id
 * null) is the webhook_events row of its event_id.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey(),
    webhookId: uuid("webhook_id")
      .notNull()
      .references(() => webhooks.id),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** Null for a prompt event. */
    runId: uuid("run_id").references(() => runs.id),
    /** The prompt event delivered; null for a run event. */
    eventId: uuid("event_id").references(() => webhookEvents.id),
    eventType: text("event_type").$type<WebhookEventType>().notNull(),
    status: text("status").$type<"pending" | "delivered" | "failed">().notNull(),
    attempts: count("attempts").notNull().default(0),
    nextAttemptAt: epochMs("next_attempt_at"),
    createdAt: epochMs("created_at").notNull(),
    /** Instance sending it now (several instances); NULL when free. */
    leaseOwner: text("lease_owner"),
    leaseUntil: epochMs("lease_until"),
  },
  (table) => [
    index("webhook_deliveries_due_idx").on(table.status, table.nextAttemptAt),
    index("webhook_deliveries_tenant_run_idx").on(table.tenantId, table.runId),
    index("webhook_deliveries_webhook_idx").on(table.webhookId),
    index("webhook_deliveries_event_idx").on(table.eventId),
  ],
);

export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: uuid("id").primaryKey(),
    deliveryId: uuid("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: count("attempt").notNull(),
    attemptedAt: epochMs("attempted_at").notNull(),
    responseStatus: count("response_status"),
    latencyMs: decimal("latency_ms"),
    error: text("error"),
  },
  (table) => [index("webhook_attempts_delivery_idx").on(table.deliveryId, table.attemptedAt)],
);

/**
 * Signed-in web consoles (docs/console.md "Serving and sign-in"): the cookie's token only as its
 * SHA-256. Read joined with the key on every console request, so a revoked key ends them at once.
 */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    apiKeyId: uuid("api_key_id")
      .notNull()
      .references(() => apiKeys.id),
    createdAt: epochMs("created_at").notNull(),
    lastSeenAt: epochMs("last_seen_at").notNull(),
    expiresAt: epochMs("expires_at").notNull(),
  },
  // A key's sessions, newest first: the per-key cap at sign-in.
  (table) => [index("console_sessions_key_idx").on(table.apiKeyId, table.createdAt)],
);

// ---------------------------------------------------------------- knowledge bases (docs/KNOWLEDGE.md)

export const knowledgeBases = sqliteTable(
  "knowledge_bases",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    slug: text("slug").notNull(),
    description: text("description"),
    /** `provider:model`; every chunk of the knowledge base is embedded by it. */
    embeddingModel: text("embedding_model").notNull(),
    chunkMaxTokens: count("chunk_max_tokens").notNull(),
    chunkOverlap: count("chunk_overlap").notNull(),
    /** Bumped in every transaction that adds or removes chunks: the vector index reloads on a change. */
    vectorGeneration: count("vector_generation").notNull().default(0),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [uniqueIndex("knowledge_bases_tenant_slug_unique").on(table.tenantId, table.slug)],
);

/**
 * Documents, and the durable ingestion queue: pending → processing (leased) → ready | failed.
 * `content` holds the upload until the document is ready or failed.
 */
export const kbDocuments = sqliteTable(
  "kb_documents",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    knowledgeBaseId: uuid("knowledge_base_id")
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: "cascade" }),
    externalId: text("external_id"),
    filename: text("filename").notNull(),
    mediaType: text("media_type").$type<DocumentMediaType>().notNull(),
    metadata: jsonText<Metadata>("metadata").notNull(),
    status: text("status").$type<DocumentStatus>().notNull(),
    error: text("error"),
    bytes: count("bytes").notNull(),
    chunkCount: count("chunk_count").notNull().default(0),
    tokens: count("tokens").notNull().default(0),
    cost: jsonText<DocumentCost>("cost"),
    attempts: count("attempts").notNull().default(0),
    content: blob("content", { mode: "buffer" }),
    leaseOwner: text("lease_owner"),
    leaseUntil: epochMs("lease_until"),
    createdAt: epochMs("created_at").notNull(),
    readyAt: epochMs("ready_at"),
  },
  (table) => [
    // The ingestion claim: the oldest pending (or expired processing) document.
    index("kb_documents_claim_idx").on(table.status, table.createdAt),
    index("kb_documents_kb_created_idx").on(table.knowledgeBaseId, table.createdAt, table.id),
    uniqueIndex("kb_documents_external_id_unique")
      .on(table.knowledgeBaseId, table.externalId)
      .where(sql`${table.externalId} IS NOT NULL`),
  ],
);

/**
 * Chunks of ready documents with their float32 vectors (little-endian). `seq` is the rowid the
 * FTS5 table `kb_chunks_fts` (external content, created in the migration with its triggers)
 * indexes: an explicit INTEGER PRIMARY KEY, so VACUUM never renumbers it.
 */
export const kbChunks = sqliteTable(
  "kb_chunks",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: uuid("id").notNull(),
    knowledgeBaseId: uuid("knowledge_base_id").notNull(),
    documentId: uuid("document_id")
      .notNull()
      .references(() => kbDocuments.id, { onDelete: "cascade" }),
    ordinal: count("ordinal").notNull(),
    text: text("text").notNull(),
    tokens: count("tokens").notNull(),
    embedding: blob("embedding", { mode: "buffer" }).notNull(),
  },
  (table) => [
    uniqueIndex("kb_chunks_id_unique").on(table.id),
    // loadVectors' stable order, and the cascade from kb_documents.
    index("kb_chunks_kb_document_idx").on(table.knowledgeBaseId, table.documentId, table.ordinal),
    index("kb_chunks_document_idx").on(table.documentId),
  ],
);

// ---------------------------------------------------------------- workflows (docs/WORKFLOWS.md)

/** Workflow definitions, versioned and tagged exactly like prompts. */
export const workflows = sqliteTable(
  "workflows",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    slug: text("slug").notNull(),
    latestVersion: count("latest_version").notNull().default(0),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [uniqueIndex("workflows_tenant_slug_unique").on(table.tenantId, table.slug)],
);

export const workflowVersions = sqliteTable(
  "workflow_versions",
  {
    id: uuid("id").primaryKey(),
    workflowId: uuid("workflow_id")
      .notNull()
      .references(() => workflows.id),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    version: count("version").notNull(),
    definition: jsonText<WorkflowDefinition>("definition").notNull(),
    contentHash: text("content_hash").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [uniqueIndex("workflow_versions_workflow_version_unique").on(table.workflowId, table.version)],
);

export const workflowTags = sqliteTable(
  "workflow_tags",
  {
    workflowId: uuid("workflow_id")
      .notNull()
      .references(() => workflows.id),
    tag: text("tag").notNull(),
    versionId: uuid("version_id")
      .notNull()
      .references(() => workflowVersions.id),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.workflowId, table.tag] }),
    index("workflow_tags_version_idx").on(table.versionId),
  ],
);

/**
 * A workflow run: its state, and its steps as one JSON array. Every change is a compare-and-set
 * on `revision` (and status pending), so two instances advancing one run never both win.
 */
export const workflowRuns = sqliteTable(
  "workflow_runs",
  {
    id: uuid("id").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    workflowId: uuid("workflow_id")
      .notNull()
      .references(() => workflows.id),
    workflowVersionId: uuid("workflow_version_id")
      .notNull()
      .references(() => workflowVersions.id),
    workflowSlug: text("workflow_slug").notNull(),
    workflowVersion: count("workflow_version").notNull(),
    threadId: uuid("thread_id").notNull(),
    priority: text("priority").$type<Priority>().notNull(),
    environment: text("environment").notNull(),
    inputs: jsonText<Record<string, unknown>>("inputs").notNull(),
    metadata: jsonText<Metadata>("metadata").notNull(),
    /** AES-256-GCM ciphertext of the run's envVars (given to every step); NULL once it has ended. */
    encryptedEnvVars: text("encrypted_env_vars"),
    /** Step id → the prompt version id its reference resolved to at create. */
    promptVersions: jsonText<Record<string, string>>("prompt_versions").notNull(),
    status: text("status").$type<WorkflowRunStatus>().notNull(),
    createdAt: epochMs("created_at").notNull(),
    startedAt: epochMs("started_at"),
    finishedAt: epochMs("finished_at"),
    output: text("output"),
    outputJson: jsonText<unknown>("output_json"),
    error: text("error"),
    tokenUsage: jsonText<TokenUsage>("token_usage"),
    cost: jsonText<Cost>("cost"),
    steps: jsonText<StoredWorkflowStep[]>("steps").notNull(),
    /** Bumped by every change: the compare-and-set token of an advance. */
    revision: count("revision").notNull().default(0),
  },
  (table) => [
    foreignKey({ columns: [table.tenantId, table.threadId], foreignColumns: [threads.tenantId, threads.id] }),
    // A tenant's runs newest first (createdAt desc, id desc keyset).
    index("workflow_runs_tenant_created_idx").on(table.tenantId, table.createdAt, table.id),
    // Recovery: the pending runs, oldest first; partial, so ended runs leave it.
    index("workflow_runs_pending_idx").on(table.createdAt, table.id).where(sql`${table.status} = 'pending'`),
  ],
);

/** Idempotency-Keys of workflow run creates: a key names one workflow run per tenant. */
export const workflowIdempotencyKeys = sqliteTable(
  "workflow_idempotency_keys",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    runId: uuid("run_id")
      .notNull()
      .references(() => workflowRuns.id),
    threadId: uuid("thread_id").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.tenantId, table.key] })],
);
