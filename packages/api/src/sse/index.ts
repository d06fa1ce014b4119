import { isUuid } from "@promptrun/contract";
import { bearerCredential, type StreamTokenClaims } from "@promptrun/core";
import type { ApiDeps, StreamServer } from "../deps.ts";
import { errorResponse, responseForError } from "../errors.ts";
import { isSafeEventId } from "./encode.ts";
import { openSseSession } from "./sse-session.ts";
import { createStreamRegistry, type EndReason } from "./stream-registry.ts";

export type { EndReason } from "./stream-registry.ts";

export interface StreamOptions {
  /** A token the caller already verified for this thread, with its claims (used when it is the request's). */
  verified?: { token: string; claims: StreamTokenClaims };
  /**
   * Called once when an opened stream ends (end event queued, client gone); never when the answer
   * is not a stream (status other than 200), which the caller handles.
   */
  onClose?: () => void;
}

export interface StreamHandler {
  (request: Request, threadId: string, server?: StreamServer, options?: StreamOptions): Promise<Response>;
  /** Ends every open stream with `event: end` {reason} (graceful shutdown); returns how many. */
  closeAllStreams(reason?: EndReason): number;
  /** Streams currently open. */
  openStreams(): number;
}

/** `Authorization: Bearer <token>` first, then `?token=` (the browser's EventSource cannot send headers). */
function streamTokenOf(request: Request, url: URL): string | null {
  const header = request.headers.get("authorization");
  if (header !== null) return bearerCredential(header);
  const fromQuery = url.searchParams.get("token");
  return fromQuery === null || fromQuery === "" ? null : fromQuery;
}

function lastEventIdOf(request: Request, url: URL): string | null {
  const id = request.headers.get("last-event-id") ?? url.searchParams.get("lastEventId");
  return id === null || id === "" || !isSafeEventId(id) ? null : id;
}

/** `GET /stream/:thread`: a thread's live events over SSE, authorised by a stream token. */
export function createStreamHandler(deps: ApiDeps): StreamHandler {
  const registry = createStreamRegistry();

  const handle = async (
    request: Request,
    threadId: string,
    server?: StreamServer,
    options?: StreamOptions,
  ): Promise<Response> => {
    if (!isUuid(threadId)) return errorResponse("not_found", `malformed thread id '${threadId}'`);
    const url = new URL(request.url);
    const token = streamTokenOf(request, url);
    if (token === null) return errorResponse("unauthorized", "missing stream token");
    let claims: StreamTokenClaims;
    try {
      claims =
        options?.verified?.token === token
          ? options.verified.claims
          : await deps.services.streamTokens.verify(token, threadId);
    } catch (error) {
      return responseForError(error, deps.logger, { route: "/stream/:thread" });
    }
    // Bun would otherwise close a response that stays quiet past its idle timeout.
    server?.timeout(request, 0);
    return openSseSession({
      deps,
      request,
      token,
      claims,
      lastEventId: lastEventIdOf(request, url),
      registry,
      onClose: options?.onClose,
    });
  };

  return Object.assign(handle, {
    closeAllStreams: (reason: EndReason = "shutdown") => registry.closeAll(reason),
    openStreams: () => registry.size,
  });
}
