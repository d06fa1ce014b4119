/**
 * The public surface of @promptrun/core: only what other packages, apps, tests and the bench
 * import (test doubles live in `@promptrun/core/testing`). Add a name here when something
 * outside core needs it; `bun run knip` reports names nothing imports.
 */

// Composition: the whole engine and its services from a store, a bus and a config.
export {
  defaultConfig,
  type ModelPrice,
  type OpenAICompatibleEndpoint,
  type PromptrunConfig,
} from "./config.ts";
export { RunScheduler } from "./engine/index.ts";
// Errors are values with a kind; the HTTP layer maps them in one place.
export {
  forbidden,
  invalid,
  notFound,
  PromptrunError,
  rateLimited,
  StreamAccessError,
  type StreamAccessLoss,
  unauthorized,
} from "./errors.ts";
export { createThreadEventHub } from "./events/index.ts";
// Knowledge bases: the store port (db implements it; docs/KNOWLEDGE.md).
export type {
  ChunkRecord,
  ClaimedDocument,
  DocumentCost,
  DocumentOutbox,
  DocumentRecord,
  KnowledgeBaseRecord,
  KnowledgeBaseView,
  KnowledgeStore,
  NewDocument,
} from "./knowledge/ports.ts";
// The bounded thread-memory read the stores share (docs/PRODUCT-RULES.md "Thread memory").
export {
  DEFAULT_MEMORY_BOUND,
  knownTotal,
  type MemoryBound,
  type MemoryRowSize,
  memoryWindowOf,
} from "./memory-window.ts";
// The ports the stores (db) and the buses implement.
export type {
  ApiKeyRecord,
  AuthenticatedTenant,
  Clock,
  ClusterSignals,
  ConsoleSessionRecord,
  ConsoleSessionStore,
  DeliveredThreadEvent,
  EnvironmentRecord,
  EnvironmentStore,
  IdempotencyRecord,
  ImportedMessage,
  LeaseRenewal,
  NewRun,
  PendingCursor,
  PromptListPage,
  PromptOutbox,
  PromptRecord,
  PromptStore,
  PromptVersionRecord,
  ReplayResult,
  RunCompletion,
  RunFailure,
  RunListFilter,
  RunPause,
  RunRecord,
  RunResumption,
  RunStepRecord,
  RunStore,
  Store,
  StoredMessage,
  TagHistoryRecord,
  TagMoveInput,
  TagMoveOutcome,
  TenantRecord,
  TenantStore,
  ThreadEventBus,
  UsageQuery,
  UsageRow,
  VersionSelector,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookDeliveryState,
  WebhookRecord,
  WebhookStore,
} from "./ports.ts";
// Metrics label values stay bounded: unknown models collapse to one value.
export { OTHER_MODEL_LABEL } from "./pricing/metrics-model-label.ts";
export { createPromptrun, type Promptrun } from "./promptrun.ts";
// The one parse of `Authorization: Bearer <credential>` (REST, tRPC and the SSE stream).
export { bearerCredential } from "./security/bearer.ts";
export { CONSOLE_SESSION_RULES } from "./services/console-session-service.ts";
export { formatValidationError } from "./services/format-validation-error.ts";
export {
  createSignInFailures,
  type SignInFailures,
  tooManySignInFailures,
} from "./services/sign-in-failures.ts";
export { movedByOf } from "./services/tag-move.ts";
export { uuidv7 } from "./services/uuidv7.ts";
export type {
  DocumentUpload,
  EngineMetrics,
  KnowledgeService,
  PromptrunServices,
  RateLimitedAction,
  RateLimitService,
  StreamTokenClaims,
  StreamTokenService,
} from "./services.ts";
// The events a webhook may name (the CLI's `webhooks add --events`).
export { WEBHOOK_EVENT_TYPES } from "./webhooks/webhook-event-types.ts";
// Workflows: the store port (db implements it; docs/WORKFLOWS.md).
export type {
  NewWorkflowRun,
  WorkflowRunChange,
  WorkflowRunListFilter,
  WorkflowRunRecord,
  WorkflowStepRecord,
  WorkflowStore,
  WorkflowVersionRecord,
} from "./workflows/ports.ts";
