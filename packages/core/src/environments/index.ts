export { DEFAULT_ENVIRONMENT } from "./default-environment.ts";
export { assertEnvVarLimits } from "./env-var-limits.ts";
export { createEnvironmentService, type EnvironmentServiceDependencies } from "./environment-service.ts";
export { loadEnvironmentVars } from "./load-environment-vars.ts";
export { rotateEncryption } from "./rotate-encryption.ts";
