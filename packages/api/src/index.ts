export { type App, createApp } from "./app.ts";
export {
  type ApiConfig,
  type ApiDeps,
  type ConsoleConfig,
  defaultApiConfig,
  type Logger,
  type StreamServer,
  silentLogger,
} from "./deps.ts";
export { errorResponse, responseForError, trpcCodeByErrorCode } from "./errors.ts";
export { DEFAULT_MAX_STREAMS_PER_THREAD } from "./http/thread-stream-cap.ts";
export {
  type ApiMetrics,
  createMetricsRegistry,
  type MetricsRegistryOptions,
} from "./metrics/metrics-registry.ts";
export { buildOpenApiDocument, type OpenApiDocument } from "./openapi/build-openapi-document.ts";
export type { EndReason } from "./sse/index.ts";
export type {
  AppRouter,
  Caller,
  PromptrunErrorData,
  PromptrunErrorShape,
  ThreadEventMessage,
  TrpcContext,
} from "./trpc/index.ts";
