/**
 * The application services that transports (REST, tRPC, SSE, CLI) call. One implementation,
 * built by `createPromptrun` in ./promptrun.ts; every method is tenant-scoped and throws only
 * PromptrunError.
 */
import type {
  ApiKeySummary,
  CreateRunResponse,
  DocumentAccepted,
  DocumentStatus,
  Environment,
  KnowledgeBase,
  KnowledgeDocument,
  Page,
  PromptFileInput,
  PromptListFilter,
  PromptRun,
  PromptSummary,
  PromptVersion,
  PushResult,
  RenderedPrompt,
  RunListFilters,
  RunMessages,
  SearchResponse,
  StreamTokenResponse,
  TagHistoryEntry,
  TagMove,
  Tenant,
  Thread,
  ThreadImportResult,
  ThreadMessagesPage,
  UsageRequest,
  UsageResponse,
  Webhook,
  WebhookDeliveryAttempt,
  WebhookEventType,
  WorkflowPushResult,
  WorkflowRun,
  WorkflowRunListFilters,
  WorkflowSummary,
  WorkflowVersion,
} from "@promptrun/contract";
import type { AuthenticatedTenant, TenantRecord, ThreadEventBus } from "./ports.ts";

export interface PageInput {
  cursor?: string | null;
  limit: number;
}

export interface AuthService {
  /** Resolves an `Authorization: Bearer <key>` header value to its tenant; throws unauthorized. */
  authenticate(authorizationHeader: string | null): Promise<AuthenticatedTenant>;
  /** Resolves an API key itself (the console's sign-in body); throws unauthorized "invalid API key". */
  authenticateKey(key: string): Promise<AuthenticatedTenant>;
  /** Throws forbidden ("no active subscription") when the tenant's subscription is inactive. */
  requireActiveSubscription(tenant: TenantRecord): void;
}

export interface TenantService {
  create(name: string, options?: { active?: boolean }): Promise<{ tenant: Tenant; apiKey: string }>;
  get(tenantId: string): Promise<Tenant>;
  list(): Promise<Tenant[]>;
  setSubscription(tenantId: string, active: boolean): Promise<Tenant>;
  createApiKey(tenantId: string): Promise<{ apiKey: string; key: ApiKeySummary }>;
  listApiKeys(tenantId: string): Promise<ApiKeySummary[]>;
  /** Accepts a full key or a unique prefix of one; returns how many were revoked (not_found when none). */
  revokeApiKey(keyOrPrefix: string): Promise<{ revoked: number }>;
  /**
   * One of the tenant's own active keys, by id (the console's and tRPC's revoke): never by prefix,
   * which a key of another tenant may share (not_found when it is not the tenant's, or revoked).
   */
  revokeOwnApiKey(tenantId: string, keyId: string): Promise<{ revoked: number }>;
}

export interface PromptService {
  /** Validates each file (schema + templates), then pushes; an identical prompt creates nothing. */
  /** `movedBy` (default `cli`): who moves the files' tags, for the tag history. */
  push(tenantId: string, files: PromptFileInput[] | unknown[], movedBy?: string): Promise<PushResult[]>;
  tag(
    tenantId: string,
    slug: string,
    versionSegment: string,
    tag: string,
    movedBy?: string,
  ): Promise<PushResult>;
  /** Guarded move: 400 bad tag or body, 404 unknown slug or version, 409 when the guard fails. */
  moveTag(tenantId: string, slug: string, tag: string, body: unknown, movedBy: string): Promise<TagMove>;
  /** Removes the tag; returns where it pointed; 404 for an unknown slug or tag. */
  deleteTag(tenantId: string, slug: string, tag: string, movedBy: string): Promise<number>;
  /** The tag's moves, newest first; 404 for an unknown slug (a tag never moved: an empty page). */
  tagHistory(tenantId: string, slug: string, tag: string, page: PageInput): Promise<Page<TagHistoryEntry>>;
  /** versionSegment: UUID → id; digits → number; `latest`; anything else → tag. */
  get(tenantId: string, slug: string, versionSegment: string): Promise<PromptVersion>;
  /** Slug order; `q` (slug or description, case-insensitive substring) and `tag` narrow the list. */
  list(tenantId: string, page: PageInput & PromptListFilter): Promise<Page<PromptSummary>>;
  /** One prompt's summary; not_found for an unknown slug. */
  summary(tenantId: string, slug: string): Promise<PromptSummary>;
  versions(tenantId: string, slug: string, page: PageInput): Promise<Page<PromptVersion>>;
}

export interface CreateRunOptions {
  idempotencyKey?: string;
}

export interface SubmitToolOutputsOptions {
  idempotencyKey?: string;
}

export interface RunService {
  /**
   * Order of checks (docs/PRODUCT-RULES.md): unknown slug/version/tag → 404; then the body (`unknown`, the
   * parsed JSON) against createRunRequestSchema, inputs against the declarations, unknown
   * environment → 400; rate limits and queue caps → 429. Resolves after the run is durably
   * committed and handed to the engine. `replayed` is true when an Idempotency-Key matched.
   */
  create(
    tenant: TenantRecord,
    slug: string,
    versionSegment: string,
    body: unknown,
    options?: CreateRunOptions,
  ): Promise<CreateRunResponse & { replayed: boolean }>;
  /**
   * The request a run would send, without running it (docs/PRODUCT-RULES.md "Render"): create-run's
   * checks in its order, no subscription needed, env var values shown as `[env:NAME]`.
   */
  render(tenantId: string, slug: string, versionSegment: string, body: unknown): Promise<RenderedPrompt>;
  get(tenantId: string, id: string): Promise<PromptRun>;
  /**
   * What the run's first model call was sent (docs/PRODUCT-RULES.md "Run messages"): system
   * messages, the history it carried, its rendered messages; env values as `[env:NAME]`. 404 as `get`.
   */
  messages(tenantId: string, id: string): Promise<RunMessages>;
  /** Newest first; filters combined with AND (docs/PRODUCT-RULES.md "Listing runs"). `slug` = `prompt`. */
  list(
    tenantId: string,
    filter: RunListFilters & { slug?: string },
    page: PageInput,
  ): Promise<Page<PromptRun>>;
  /** Ended runs created in [from, to), grouped (docs/PRODUCT-RULES.md "Usage"); 400 for a bad range. */
  usage(tenantId: string, request: UsageRequest): Promise<UsageResponse>;
  /** Aborts the provider call; conflict when the run already ended. */
  cancel(tenantId: string, id: string): Promise<PromptRun>;
  /**
   * Answers a run paused for client tool calls (docs/PRODUCT-RULES.md "Tool outputs"): 403 no
   * subscription, 404 unknown run, 400 body (`unknown`, the parsed JSON, against
   * submitToolOutputsRequestSchema) and ids, 409 not waiting or expired. Resolves once the pause
   * has ended in the store and the engine has the run again; `replayed` as on create.
   */
  submitToolOutputs(
    tenant: TenantRecord,
    id: string,
    body: unknown,
    options?: SubmitToolOutputsOptions,
  ): Promise<CreateRunResponse & { replayed: boolean }>;
}

export interface ThreadService {
  /** One page of the thread's messages, oldest first, bounded in count and bytes. */
  get(tenantId: string, threadId: string, page?: PageInput): Promise<Thread>;
  /** One channel's messages, oldest first; an unknown thread has none (docs/PRODUCT-RULES.md "Thread memory"). */
  messages(tenantId: string, threadId: string, request: unknown): Promise<ThreadMessagesPage>;
  /** Imports messages into a channel's memory; a repeated externalId is skipped. */
  import(tenantId: string, threadId: string, body: unknown): Promise<ThreadImportResult>;
}

export interface StreamTokenClaims {
  tenantId: string;
  threadId: string;
  expiresAt: Date;
  /** The API key that minted the token (absent in tokens minted before keys were named). */
  apiKeyId?: string;
}

export interface StreamTokenService {
  issue(tenant: AuthenticatedTenant, threadId: string): Promise<StreamTokenResponse>;
  /**
   * Verifies signature, algorithm (HS256 only) and expiry (unauthorized), then that the token's
   * thread is `threadId` (forbidden), then — with a store — that the tenant is still active and
   * the minting key not revoked (StreamAccessError).
   */
  verify(token: string, threadId: string): Promise<StreamTokenClaims>;
}

export interface EnvironmentService {
  list(tenantId: string): Promise<Environment[]>;
  ensure(tenantId: string, name: string): Promise<Environment>;
  setEnvVars(tenantId: string, name: string, values: Record<string, string>): Promise<Environment>;
  unsetEnvVars(tenantId: string, name: string, keys: string[]): Promise<Environment>;
  /** Re-encrypts every stored secret under the current key. */
  rotateEncryption(): Promise<{ reEncrypted: number }>;
}

export interface WebhookService {
  create(
    tenantId: string,
    input: { environment: string; url: string; events?: WebhookEventType[] },
  ): Promise<{ webhook: Webhook; secret: string }>;
  list(tenantId: string): Promise<Webhook[]>;
  delete(tenantId: string, id: string): Promise<void>;
  attempts(
    tenantId: string,
    filter: { webhookId?: string; runId?: string; limit?: number },
  ): Promise<WebhookDeliveryAttempt[]>;
  redeliver(tenantId: string, deliveryId: string): Promise<void>;
  setEnabled(tenantId: string, id: string, enabled: boolean): Promise<Webhook>;
}

/** A new console session: the cookie's token (given once, stored only hashed) and whose it is. */
export interface ConsoleSignIn {
  token: string;
  tenant: { id: string; name: string };
  expiresAt: Date;
}

/** The web console's sign-in (docs/console.md "Serving and sign-in"). */
export interface ConsoleSessionService {
  /**
   * Exchanges `{"apiKey": …}` (the parsed JSON body) for a session. `clientAddress` keys the
   * failed sign-in limit: 429 once an address failed too often, checked first; then 400 for
   * another body and 401 for a wrong, malformed or revoked key.
   */
  signIn(body: unknown, clientAddress: string): Promise<ConsoleSignIn>;
  /**
   * The tenant of a live session, named by the session's API key (as the key itself would be);
   * unauthorized when the token is unknown, expired, idle too long or its key was revoked.
   */
  authenticate(token: string): Promise<AuthenticatedTenant>;
  /** Ends the session of `token`; nothing happens for an unknown one. */
  signOut(token: string): Promise<void>;
}

/** Each action has its own per-tenant bucket (all sized by the rate-limit settings). */
export type RateLimitedAction =
  | "runs.create"
  | "stream-token"
  | "prompts.render"
  | "knowledge.documents"
  | "knowledge.search";

export interface RateLimitService {
  /**
   * Takes one token from the tenant's bucket for `action`; throws (or rejects) rate_limited with
   * retryAfterSeconds. In-process buckets answer synchronously, shared (Redis) ones with a promise:
   * callers await it.
   */
  take(tenantId: string, action: RateLimitedAction): void | Promise<void>;
  /** Current state for RateLimit-* headers (a shared limiter answers from what it last saw). */
  state(
    tenantId: string,
    action: RateLimitedAction,
  ): { limit: number; remaining: number; resetSeconds: number };
}

/**
 * Workflow definitions (docs/WORKFLOWS.md "Workflow files"): pushed, versioned and tagged like
 * prompts. Bodies are unknown and checked here.
 */
export interface WorkflowService {
  /**
   * Checks each file (schema, then the graph: cycles, unknown steps, undeclared inputs, `when`
   * and templates that do not compile, prompt references that do not resolve in the tenant or
   * whose declared inputs the step does not fill), then pushes; an identical workflow creates
   * nothing. 400 names the file's slug and the path of the first error.
   */
  push(tenantId: string, files: unknown[]): Promise<WorkflowPushResult[]>;
  /** PUT /workflows/{slug}/tags/{tag} with `{version}`: 400 bad tag or body, 404 unknown slug or version. */
  tag(tenantId: string, slug: string, tag: string, body: unknown): Promise<WorkflowPushResult>;
  /** versionSegment: UUID → id; digits → number; `latest`; anything else → tag. */
  get(tenantId: string, slug: string, versionSegment: string): Promise<WorkflowVersion>;
  list(tenantId: string, page: PageInput): Promise<Page<WorkflowSummary>>;
  versions(tenantId: string, slug: string, page: PageInput): Promise<Page<WorkflowVersion>>;
}

/** Workflow runs (docs/WORKFLOWS.md "Runs"). */
export interface WorkflowRunService {
  /**
   * create-run's rules and order: 403 no subscription, 404 unknown workflow or version, 400 the
   * body (createWorkflowRunRequestSchema) and inputs against the workflow's declarations, an
   * unknown environment or a prompt reference that no longer resolves; 429 rate limit or queue
   * cap. Resolves once the workflow run is durably committed; its first steps start then.
   */
  create(
    tenant: TenantRecord,
    slug: string,
    versionSegment: string,
    body: unknown,
    options?: CreateRunOptions,
  ): Promise<CreateRunResponse & { replayed: boolean }>;
  get(tenantId: string, id: string): Promise<WorkflowRun>;
  /** Newest first; filters combined with AND. */
  list(tenantId: string, filter: WorkflowRunListFilters, page: PageInput): Promise<Page<WorkflowRun>>;
  /** Cancels the running steps; the run ends failed "cancelled"; 409 when it has ended. */
  cancel(tenantId: string, id: string): Promise<WorkflowRun>;
}

export interface PromptrunServices {
  auth: AuthService;
  tenants: TenantService;
  prompts: PromptService;
  runs: RunService;
  threads: ThreadService;
  streamTokens: StreamTokenService;
  environments: EnvironmentService;
  webhooks: WebhookService;
  consoleSessions: ConsoleSessionService;
  knowledge: KnowledgeService;
  workflows: WorkflowService;
  workflowRuns: WorkflowRunService;
  rateLimits: RateLimitService;
  events: ThreadEventBus;
}

/** A document as a transport received it (REST multipart or JSON, tRPC text): checked by the service. */
export interface DocumentUpload {
  content: Uint8Array;
  /** The file's name (multipart: its filename; JSON: `filename`). */
  filename: unknown;
  /** The declared media type (multipart part type, JSON `mediaType`); absent: from the extension. */
  mediaType?: unknown;
  /** Parsed JSON (multipart: the `metadata` field parsed). */
  metadata?: unknown;
  externalId?: unknown;
  /** A JSON `text` upload: a filename without a known extension is text/plain (a file's is 415). */
  text?: boolean;
}

/**
 * Knowledge bases (docs/KNOWLEDGE.md). `slug` names the tenant's knowledge base: another
 * tenant's is not_found. Bodies are unknown and checked against the contract's schemas here.
 */
export interface KnowledgeService {
  /** 400 invalid body or unknown embedding model, 409 slug taken. */
  create(tenantId: string, body: unknown): Promise<KnowledgeBase>;
  list(tenantId: string, page: PageInput): Promise<Page<KnowledgeBase>>;
  get(tenantId: string, slug: string): Promise<KnowledgeBase>;
  /** Its documents and chunks go with it. */
  delete(tenantId: string, slug: string): Promise<void>;
  /**
   * Stores the upload durably and queues its ingestion. 413 over the upload limit, 415 a type
   * not supported or content that is not what its name or type says, 400 bad fields.
   */
  addDocument(tenantId: string, slug: string, upload: DocumentUpload): Promise<DocumentAccepted>;
  listDocuments(
    tenantId: string,
    slug: string,
    page: PageInput & { status?: DocumentStatus | undefined },
  ): Promise<Page<KnowledgeDocument>>;
  getDocument(tenantId: string, slug: string, id: string): Promise<KnowledgeDocument>;
  deleteDocument(tenantId: string, slug: string, id: string): Promise<void>;
  /** 400 invalid body (topK over 50 included). */
  search(tenantId: string, slug: string, body: unknown): Promise<SearchResponse>;
}

/** Observability hooks the engine calls; the app wires them to Prometheus metrics. */
export interface EngineMetrics {
  runFinished(outcome: "completed" | "failed", model: string, durationMs: number): void;
  providerCall(model: string, outcome: "ok" | "error", latencyMs: number): void;
  queueDepth(depthByPriority: Record<"onsite" | "normal" | "low", number>): void;
}
