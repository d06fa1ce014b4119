import { DEFAULT_MAX_UPLOAD_BYTES } from "@promptrun/contract";
import type { PromptrunServices } from "@promptrun/core";
import type { ApiMetrics } from "./metrics/metrics-registry.ts";

/** Structured logger (pino-compatible subset); the app passes a real one. */
export interface Logger {
  info(object: Record<string, unknown>, message?: string): void;
  warn(object: Record<string, unknown>, message?: string): void;
  error(object: Record<string, unknown>, message?: string): void;
  debug(object: Record<string, unknown>, message?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/** Transport-level settings (parsed from the environment by apps/server). */
export interface ApiConfig {
  publicUrl: string;
  /** Bytes; larger bodies get 413 before parsing. */
  maxBodyBytes: number;
  /**
   * Bytes of one uploaded document (PROMPTRUN_MAX_UPLOAD_BYTES, the engine's
   * `knowledge.maxUploadBytes`): the upload route's own limit instead of maxBodyBytes.
   */
  maxUploadBytes: number;
  /** Maximum JSON nesting depth accepted in a body. */
  maxJsonDepth: number;
  pingIntervalMs: number;
  /** Bytes buffered to one slow SSE subscriber before it is dropped with an `end` event. */
  subscriberBufferBytes: number;
  /** Operator token for tenant administration over tRPC; admin procedures are disabled when unset. */
  adminToken?: string;
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>` (else 401). */
  metricsToken?: string;
  /**
   * The web console (docs/console.md): served from `distDir`, with its sign-in and its session
   * cookie accepted on REST and tRPC. Absent: `/console`, everything under it and the cookie are off.
   */
  console?: ConsoleConfig;
}

export interface ConsoleConfig {
  /** The built console (`bun run console:build`): index.html and hashed assets under assets/. */
  distDir: string;
}

export const defaultApiConfig: ApiConfig = {
  publicUrl: "http://127.0.0.1:3000",
  maxBodyBytes: 1_048_576,
  maxUploadBytes: DEFAULT_MAX_UPLOAD_BYTES,
  maxJsonDepth: 64,
  pingIntervalMs: 5_000,
  subscriberBufferBytes: 1_048_576,
};

/** What Bun's server offers a handler that streams (SSE disables the idle timeout per request). */
export interface StreamServer {
  timeout(request: Request, seconds: number): void;
  /** The client's address (Bun's Server#requestIP): the console's failed sign-in limit counts per address. */
  requestIP?(request: Request): { address: string } | null;
}

export interface ApiDeps {
  services: PromptrunServices;
  config: ApiConfig;
  logger: Logger;
  /** Health details (database reachable, engine running). */
  health?: () => Promise<{ ok: boolean; details: Record<string, unknown> }>;
  /** Prometheus text of the process's metrics registry, appended to /metrics. */
  metricsText?: () => Promise<string> | string;
  /**
   * Metrics registry (createMetricsRegistry): HTTP requests, open SSE streams
   * (`streamOpened()/streamClosed()`), engine hooks. createApp makes one when absent.
   */
  metrics?: ApiMetrics;
}
