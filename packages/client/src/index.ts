export * from "./api-error.ts";
export * from "./promptrun-client.ts";
export * from "./prompts.ts";
export type { PromptCacheOptions } from "./prompts-cache.ts";
export * from "./render.ts";
export * from "./run-output-json.ts";
export * from "./subscribe-to-thread.ts";
