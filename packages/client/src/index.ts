export * from "./api-error.ts";
export * from "./promptrun-client.ts";
export * from "./prompts.ts";
export type { PromptCacheOptions } from "./prompts-cache.ts";
export * from "./render.ts";
export * from "./run-output-json.ts";
export type { ListRunsOptions } from "./runs-list.ts";
export * from "./subscribe-to-thread.ts";
export type { UsageOptions } from "./usage.ts";
