import { createHash, timingSafeEqual } from "node:crypto";
import { bearerCredential, type PromptrunServices, type TenantRecord } from "@promptrun/core";
import { authenticateRequest, consoleSessionOf } from "../console/console-request.ts";
import type { ApiConfig, ApiDeps, Logger } from "../deps.ts";
import type { ThreadStreamCap } from "../http/thread-stream-cap.ts";
import type { StreamRegistry } from "../sse/stream-registry.ts";

/** Who is calling, from `Authorization: Bearer …` or, without that header, the console's session cookie. */
export type Caller =
  | { kind: "anonymous" }
  | { kind: "tenant"; tenant: TenantRecord }
  /** A stream token: reads the runs and workflow runs of its thread (`run.get`, `workflowRun.get`), nothing else. */
  | { kind: "stream-token"; token: string }
  /** An API key or console session that did not authenticate: the error surfaces only where a tenant is required. */
  | { kind: "rejected"; error: unknown };

export interface TrpcContext {
  services: PromptrunServices;
  config: ApiConfig;
  logger: Logger;
  metrics: ApiDeps["metrics"];
  caller: Caller;
  /** `x-promptrun-admin-token` matched the configured operator token. */
  isOperator: boolean;
  /** Open subscriptions, so the handler can end them all at shutdown. */
  subscriptions: StreamRegistry;
  /** Per-thread cap on open subscriptions (shared with GET /stream/:thread when mounted by the app). */
  streamCap: ThreadStreamCap;
}

/** Stream tokens are JWTs (three base64url segments); API keys (`pr_live_…`) never contain a dot. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** Constant time: both sides are hashed to 32 bytes first (timingSafeEqual throws on unequal lengths). */
export function adminTokenMatches(presented: string | null, configured: string | undefined): boolean {
  if (presented === null || configured === undefined || configured === "") return false;
  return timingSafeEqual(sha256(presented), sha256(configured));
}

async function callerOf(deps: ApiDeps, request: Request): Promise<Caller> {
  const authorization = request.headers.get("authorization");
  if (authorization === null && consoleSessionOf(deps, request) === null) return { kind: "anonymous" };
  if (authorization !== null) {
    if (authorization.trim() === "") return { kind: "anonymous" };
    const bearer = bearerCredential(authorization);
    if (bearer !== null && JWT_SHAPE.test(bearer)) return { kind: "stream-token", token: bearer };
  }
  try {
    // The one rule REST follows too: the Authorization header, else the console's cookie.
    return { kind: "tenant", tenant: await authenticateRequest(deps, request) };
  } catch (error) {
    return { kind: "rejected", error };
  }
}

export async function createTrpcContext(
  deps: ApiDeps,
  request: Request,
  { subscriptions, streamCap }: Pick<TrpcContext, "subscriptions" | "streamCap">,
): Promise<TrpcContext> {
  return {
    services: deps.services,
    config: deps.config,
    logger: deps.logger,
    metrics: deps.metrics,
    caller: await callerOf(deps, request),
    isOperator: adminTokenMatches(request.headers.get("x-promptrun-admin-token"), deps.config.adminToken),
    subscriptions,
    streamCap,
  };
}
