export * from "./errors.ts";
export * from "./ids.ts";
export * from "./pagination.ts";
export * from "./prompt.ts";
export * from "./run.ts";
export * from "./stream.ts";
export * from "./trpc.ts";
export * from "./webhook.ts";
