import { PromptrunError } from "@promptrun/core";
import type { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { type ApiDeps, defaultApiConfig } from "../deps.ts";
import { WWW_AUTHENTICATE_BEARER } from "../errors.ts";
import {
  createThreadStreamCap,
  DEFAULT_MAX_STREAMS_PER_THREAD,
  type ThreadStreamCap,
} from "../http/thread-stream-cap.ts";
import { createStreamRegistry, type EndReason } from "../sse/stream-registry.ts";
import { createAppRouter } from "./app-router.ts";
import { createTrpcContext } from "./context.ts";
import { isUnexpectedError } from "./error-formatter.ts";
import { limitTrpcRequest, MAX_TRPC_BATCH_SIZE } from "./request-limits.ts";

export type { Caller, TrpcContext } from "./context.ts";
export type { PromptrunErrorData, PromptrunErrorShape } from "./error-formatter.ts";
export type { ThreadEventMessage } from "./thread-events.ts";
export { createAppRouter };

/** The router with default settings: what `AppRouter` describes (handlers build their own with the configured ping). */
export const appRouter = createAppRouter({ pingIntervalMs: defaultApiConfig.pingIntervalMs });
export type AppRouter = typeof appRouter;

export interface TrpcHandler {
  (request: Request): Promise<Response>;
  /** Ends every `thread.onEvents` subscription with an `end` event (graceful shutdown); returns how many. */
  closeAllSubscriptions(reason?: EndReason): number;
  openSubscriptions(): number;
}

export interface TrpcHandlerOptions {
  /**
   * Per-thread cap on open `thread.onEvents` subscriptions. Pass the SSE endpoint's cap to share
   * one counter; default: a cap of this handler's own at DEFAULT_MAX_STREAMS_PER_THREAD.
   */
  streamCap?: ThreadStreamCap;
}

/** Thrown as UNAUTHORIZED, or a PromptrunError of that kind (tRPC wraps it as its cause). */
const isUnauthorized = (error: TRPCError): boolean =>
  error.code === "UNAUTHORIZED" ||
  (PromptrunError.isInstance(error.cause) && error.cause.code === "unauthorized");

/** The tRPC fetch handler, mounted at `/trpc`. */
export function createTrpcHandler(deps: ApiDeps, options: TrpcHandlerOptions = {}): TrpcHandler {
  const router = createAppRouter({ pingIntervalMs: deps.config.pingIntervalMs });
  const subscriptions = createStreamRegistry();
  const streamCap = options.streamCap ?? createThreadStreamCap(DEFAULT_MAX_STREAMS_PER_THREAD);

  const handle = async (request: Request): Promise<Response> => {
    const limited = limitTrpcRequest(request, deps.config);
    if (limited instanceof Response) return limited;
    return fetchRequestHandler({
      endpoint: "/trpc",
      req: limited,
      maxBatchSize: MAX_TRPC_BATCH_SIZE,
      router,
      createContext: () => createTrpcContext(deps, request, { subscriptions, streamCap }),
      onError: ({ error, path, type }) => {
        if (!isUnexpectedError(error)) return;
        const cause = error.cause ?? error;
        deps.logger.error(
          {
            path,
            type,
            err: cause instanceof Error ? { message: cause.message, stack: cause.stack } : String(cause),
          },
          "unhandled error in tRPC procedure",
        );
      },
      responseMeta: ({ errors }) => {
        if (errors.some(isUnauthorized)) return { headers: WWW_AUTHENTICATE_BEARER };
        const retryAfter = errors
          .map((error) => error.cause)
          .find((cause) => PromptrunError.isInstance(cause) && cause.retryAfterSeconds !== undefined);
        if (!PromptrunError.isInstance(retryAfter) || retryAfter.retryAfterSeconds === undefined) return {};
        return { headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfter.retryAfterSeconds))) } };
      },
    });
  };

  return Object.assign(handle, {
    closeAllSubscriptions: (reason: EndReason = "shutdown") => subscriptions.closeAll(reason),
    openSubscriptions: () => subscriptions.size,
  });
}
