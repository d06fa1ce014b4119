export * from "./config.ts";
export * from "./engine/index.ts";
export * from "./engine-port.ts";
export {
  createEnvironmentService,
  DEFAULT_ENVIRONMENT,
  type EnvironmentServiceDependencies,
  loadEnvironmentVars,
} from "./environments/index.ts";
export * from "./errors.ts";
export * from "./events/index.ts";
export * from "./memory-window.ts";
export * from "./models/index.ts";
export * from "./ports.ts";
export * from "./pricing/index.ts";
export { createPromptrun, type Promptrun, type PromptrunDeps } from "./promptrun.ts";
export { createTokenBucketRateLimiter, type TokenBucketOptions } from "./rate-limit/token-bucket.ts";
export * from "./security/api-keys.ts";
export * from "./security/bearer.ts";
export * from "./security/secret-box.ts";
export * from "./security/stream-tokens.ts";
export * from "./security/url-guard.ts";
export { createAuthService } from "./services/auth-service.ts";
export { canonicalHash, canonicalJson } from "./services/canonical-json.ts";
export { formatValidationError } from "./services/format-validation-error.ts";
export { describeMissingVersion, parseVersionSegment } from "./services/parse-version-segment.ts";
export { createPromptService, type PromptServiceDependencies } from "./services/prompt-service.ts";
export { createRunService, type RunServiceDependencies } from "./services/run-service.ts";
export { createTenantService, type TenantServiceDependencies } from "./services/tenant-service.ts";
export { createThreadService } from "./services/thread-service.ts";
export { toPromptRun } from "./services/to-prompt-run.ts";
export { toPromptSummary, toPromptVersion } from "./services/to-prompt-version.ts";
export { uuidv7, uuidv7Time } from "./services/uuidv7.ts";
export * from "./services.ts";
export * from "./templating/template.ts";
export {
  createWebhookDispatcher,
  createWebhookService,
  type WebhookDispatcher,
  type WebhookDispatcherDependencies,
  type WebhookServiceDependencies,
} from "./webhooks/index.ts";
