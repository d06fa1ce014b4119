import { bearerCredential } from "@promptrun/core";
import { createConsoleAssetsHandler } from "./console/console-assets.ts";
import { isConsolePath, withConsoleHeaders } from "./console/console-headers.ts";
import { currentSessionHandler, signInHandler, signOutHandler } from "./console/console-session-routes.ts";
import type { ApiDeps, StreamServer } from "./deps.ts";
import { errorResponse, responseForError } from "./errors.ts";
import { isBrowserFacing, preflightResponse, withCors } from "./http/cors.ts";
import { healthResponse } from "./http/health.ts";
import { requestIdFor } from "./http/request-id.ts";
import { Router } from "./http/router.ts";
import { markServerFramed } from "./http/server-framed.ts";
import {
  createThreadStreamCap,
  DEFAULT_MAX_STREAMS_PER_THREAD,
  threadStreamKey,
} from "./http/thread-stream-cap.ts";
import { createMetricsRegistry } from "./metrics/metrics-registry.ts";
import { metricsResponse } from "./metrics/metrics-response.ts";
import { buildOpenApiDocument } from "./openapi/build-openapi-document.ts";
import { docsPageResponse } from "./openapi/docs-page.ts";
import { createScalarBundleHandler } from "./openapi/scalar-bundle.ts";
import { cancelRunHandler } from "./rest/cancel-run.ts";
import { createRunHandler } from "./rest/create-run.ts";
import { createStreamTokenHandler } from "./rest/create-stream-token.ts";
import { getRunHandler } from "./rest/get-run.ts";
import { knowledgeBaseRoutes } from "./rest/knowledge-bases/routes.ts";
import { listRunsHandler } from "./rest/list-runs.ts";
import { deleteTagHandler, setTagHandler, tagHistoryHandler } from "./rest/prompt-tags.ts";
import { pushPromptHandler } from "./rest/prompts-push.ts";
import {
  getPromptHandler,
  getPromptVersionHandler,
  listPromptsHandler,
  listPromptVersionsHandler,
} from "./rest/prompts-read.ts";
import { renderPromptHandler } from "./rest/render-prompt.ts";
import type { RestHandler } from "./rest/rest-context.ts";
import { runMessagesHandler } from "./rest/run-messages.ts";
import { submitToolOutputsHandler } from "./rest/submit-tool-outputs.ts";
import { importThreadMessagesHandler, listThreadMessagesHandler } from "./rest/thread-messages.ts";
import { usageHandler } from "./rest/usage.ts";
import { workflowRoutes } from "./rest/workflows/routes.ts";
import { createStreamHandler, type EndReason } from "./sse/index.ts";
import { createTrpcHandler } from "./trpc/index.ts";

export interface App {
  fetch(request: Request, server?: StreamServer): Promise<Response>;
  /** Ends every open SSE stream and tRPC subscription with an `end` event (graceful shutdown); returns how many. */
  closeAllStreams(reason?: EndReason): number;
}

export interface AppOptions {
  /**
   * Streams open at once on one (tenant, thread), SSE and tRPC subscriptions together; more get
   * 429 / TOO_MANY_REQUESTS. Default 50.
   */
  maxStreamsPerThread?: number;
}

/** The stream token as the SSE handler reads it: `Authorization: Bearer`, else `?token=`. */
function streamTokenOf(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header !== null) return bearerCredential(header);
  const fromQuery = new URL(request.url).searchParams.get("token");
  return fromQuery === "" ? null : fromQuery;
}

/**
 * The path of an absolute request URL. Plain paths are cut out directly (parsing a URL per request
 * is measurable on the create-run path); anything WHATWG would normalize goes through URL.
 */
export function pathnameOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start === -1) return "/";
  let end = url.length;
  for (let index = start; index < url.length; index++) {
    const code = url.charCodeAt(index);
    if (code === 63 /* ? */ || code === 35 /* # */) {
      end = index;
      break;
    }
    // . % \ and anything outside printable ASCII may be rewritten by URL parsing.
    if (code === 46 || code === 37 || code === 92 || code < 33 || code > 126) return new URL(url).pathname;
  }
  return url.slice(start, end);
}

type RouteHandler = (
  request: Request,
  params: Record<string, string>,
  server?: StreamServer,
) => Promise<Response>;

/** Methods kept as metric labels; anything else is counted as `other` (bounded label values). */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Sets a header, copying the response when its headers are immutable (e.g. a proxied fetch response). */
function withHeader(response: Response, name: string, value: string): Response {
  try {
    response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set(name, value);
    return copy;
  }
}

/**
 * The whole HTTP surface as one fetch handler: REST /api/v1, tRPC, SSE, OpenAPI, docs, health,
 * metrics and the web console. Testable in-process; apps/server hands it to Bun.serve.
 */
export function createApp(deps: ApiDeps, options: AppOptions = {}): App {
  const metrics = deps.metrics ?? createMetricsRegistry();
  const appDeps: ApiDeps = { ...deps, metrics };
  const { logger } = deps;
  // Built once: generating the document walks every schema.
  const openApiJson = JSON.stringify(buildOpenApiDocument({ serverUrl: deps.config.publicUrl }));
  // One counter for both surfaces: a thread's cap holds across SSE and tRPC subscriptions.
  const streamCap = createThreadStreamCap(options.maxStreamsPerThread ?? DEFAULT_MAX_STREAMS_PER_THREAD);
  const trpc = createTrpcHandler(appDeps, { streamCap });
  const stream = createStreamHandler(appDeps);
  const scalarBundle = createScalarBundleHandler();

  /**
   * GET /stream/:thread behind the per-thread cap. Requests whose token does not verify go
   * straight to the SSE handler, which answers them (401/403/404) exactly as before.
   */
  const cappedStream: RouteHandler = async (request, params, server) => {
    const thread = params.thread ?? "";
    const token = streamTokenOf(request);
    if (token === null) return stream(request, thread, server);
    const claims = await deps.services.streamTokens.verify(token, thread).catch(() => null);
    if (claims === null) return stream(request, thread, server);
    const release = streamCap.reserve(threadStreamKey(claims.tenantId, claims.threadId));
    if (release === null) {
      return errorResponse("rate_limited", "too many open streams on this thread", { "retry-after": "5" });
    }
    let response: Response;
    try {
      // The session frees the slot when it ends: no wrapping stream between it and the socket.
      response = await stream(request, thread, server, {
        verified: { token, claims },
        onClose: release,
      });
    } catch (error) {
      release();
      throw error;
    }
    if (response.status !== 200) release();
    return response;
  };
  const rest =
    (handler: RestHandler): RouteHandler =>
    (request, params) =>
      handler({ request, params, deps: appDeps });

  const router = new Router<RouteHandler>()
    .add("POST", "/api/v1/threads/:thread/stream-token", rest(createStreamTokenHandler))
    .add("GET", "/api/v1/threads/:thread/messages", rest(listThreadMessagesHandler))
    .add("POST", "/api/v1/threads/:thread/messages", rest(importThreadMessagesHandler))
    .add("POST", "/api/v1/prompts/:slug/:version/runs", rest(createRunHandler))
    .add("GET", "/api/v1/prompts", rest(listPromptsHandler))
    .add("POST", "/api/v1/prompts", rest(pushPromptHandler))
    .add("GET", "/api/v1/prompts/:slug", rest(getPromptHandler))
    // Before `/:slug/:version`: the static segment wins (a tag named `versions` is read by number or id).
    .add("GET", "/api/v1/prompts/:slug/versions", rest(listPromptVersionsHandler))
    .add("PUT", "/api/v1/prompts/:slug/tags/:tag", rest(setTagHandler))
    .add("DELETE", "/api/v1/prompts/:slug/tags/:tag", rest(deleteTagHandler))
    .add("GET", "/api/v1/prompts/:slug/tags/:tag/history", rest(tagHistoryHandler))
    .add("GET", "/api/v1/prompts/:slug/:version", rest(getPromptVersionHandler))
    .add("POST", "/api/v1/prompts/:slug/:version/render", rest(renderPromptHandler))
    .add("GET", "/api/v1/promptruns", rest(listRunsHandler))
    .add("GET", "/api/v1/promptruns/:id", rest(getRunHandler))
    .add("GET", "/api/v1/promptruns/:id/messages", rest(runMessagesHandler))
    .add("GET", "/api/v1/usage", rest(usageHandler))
    .add("POST", "/api/v1/promptruns/:id/cancel", rest(cancelRunHandler))
    .add("POST", "/api/v1/promptruns/:id/tool-outputs", rest(submitToolOutputsHandler))
    .add(
      "GET",
      "/api/v1/openapi.json",
      async () =>
        new Response(openApiJson, {
          headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" },
        }),
    )
    .add("GET", "/docs", async () => docsPageResponse())
    .add("GET", "/docs/scalar.js", (request) => scalarBundle(request))
    .add("GET", "/health", () => healthResponse(appDeps))
    .add("GET", "/metrics", (request) => metricsResponse(metrics, appDeps, request))
    .add("*", "/trpc/*", (request) => trpc(request))
    .add("GET", "/stream/:thread", cappedStream);
  for (const [method, pattern, handler] of [...knowledgeBaseRoutes, ...workflowRoutes])
    router.add(method, pattern, rest(handler));
  if (deps.config.console !== undefined) {
    // Off (no console config): these paths are unknown routes, 404 (docs/console.md).
    const assets = createConsoleAssetsHandler(deps.config.console.distDir);
    router
      .add("POST", "/console/session", (request, _params, server) => signInHandler(appDeps, request, server))
      .add("DELETE", "/console/session", (request) => signOutHandler(appDeps, request))
      .add("GET", "/console/session", (request) => currentSessionHandler(appDeps, request))
      .add("GET", "/console/*", (request) => assets(request, pathnameOf(request.url)));
  }

  return {
    closeAllStreams: (reason = "shutdown") =>
      stream.closeAllStreams(reason) + trpc.closeAllSubscriptions(reason),
    async fetch(request, server) {
      const startedAt = performance.now();
      if (server !== undefined && request.method !== "GET") markServerFramed(request);
      const requestId = requestIdFor(request);
      const path = pathnameOf(request.url);
      const match = router.match(request.method, path);
      let route = "unmatched";
      let response: Response;
      try {
        if (request.method === "OPTIONS" && isBrowserFacing(path)) {
          route = "preflight";
          response = preflightResponse();
        } else if (match.kind === "found") {
          route = match.route.pattern;
          response = await match.route.handler(request, match.params, server);
        } else if (match.kind === "method_not_allowed") {
          route = match.pattern;
          response = errorResponse("method_not_allowed", `method ${request.method} not allowed on ${path}`, {
            allow: match.allow.join(", "),
          });
        } else {
          response = errorResponse("not_found", "route not found");
        }
      } catch (error) {
        response = responseForError(error, logger, { requestId, method: request.method, path });
      }
      if (request.method === "HEAD" && response.body !== null) {
        await response.body.cancel().catch(() => {});
        response = new Response(null, response);
      }
      response = withHeader(response, "x-request-id", requestId);
      if (isBrowserFacing(path)) response = withCors(response);
      if (isConsolePath(path)) response = withConsoleHeaders(response);
      const method = KNOWN_METHODS.has(request.method) ? request.method : "other";
      const durationSeconds = (performance.now() - startedAt) / 1000;
      metrics.httpRequest({ method, route, status: response.status }, durationSeconds);
      logger.debug(
        {
          requestId,
          method: request.method,
          route,
          status: response.status,
          durationMs: durationSeconds * 1000,
        },
        "request",
      );
      return response;
    },
  };
}
