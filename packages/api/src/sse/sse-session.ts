import type { StreamEvent } from "@promptrun/contract";
import type { StreamTokenClaims } from "@promptrun/core";
import type { ApiDeps } from "../deps.ts";
import { createByteQueueStream } from "./byte-queue-stream.ts";
import { encodeDeliveredEvent, encodeSseMessage, pingComment } from "./encode.ts";
import type { EndReason, StreamRegistry } from "./stream-registry.ts";
import { openThreadFeed, type ThreadFeed } from "./thread-feed.ts";
import { watchTokenExpiry } from "./watch-token-expiry.ts";

export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  connection: "keep-alive",
};

export interface SseSessionOptions {
  deps: ApiDeps;
  request: Request;
  /** The verified token: its tenant scopes the bus subscription. */
  token: string;
  claims: StreamTokenClaims;
  lastEventId: string | null;
  registry: StreamRegistry;
}

/**
 * One subscriber's SSE response: `ready`, replay or `reset`, live events, `: ping` comments.
 * Ends with an `end` event on shutdown, token expiry (checked at each ping) or when the
 * subscriber falls `subscriberBufferBytes` behind; a client disconnect frees everything.
 */
export function openSseSession(options: SseSessionOptions): Response {
  const { deps, request, token, claims, registry } = options;
  const { services, config, logger } = deps;
  let feed: ThreadFeed | null = null;
  let stopWatchingToken: (() => void) | undefined;
  let released = false;
  /** `id:` of the newest event queued: what a reconnect should resume from. */
  let position = options.lastEventId ?? "";

  const release = () => {
    if (released) return;
    released = true;
    feed?.close();
    stopWatchingToken?.();
    request.signal.removeEventListener("abort", release);
    unregister();
    deps.metrics?.streamClosed();
  };

  const queue = createByteQueueStream({ maxQueuedBytes: config.subscriberBufferBytes, onCancel: release });

  const end = (reason: EndReason) => {
    if (released) return;
    const discardBacklog = reason === "slow_consumer";
    // A dropped backlog never reaches the client: the end event must not advance its position.
    const endPosition = discardBacklog ? (queue.lastTakenEventId ?? options.lastEventId ?? "") : position;
    queue.finish(encodeSseMessage(endPosition, { type: "end", data: { reason } }), { discardBacklog });
    release();
  };

  const write = (chunk: Uint8Array, eventId?: string) => {
    if (queue.write(chunk, eventId) === "overflow") {
      logger.info(
        { thread: claims.threadId, queuedBytes: queue.queuedBytes },
        "dropping slow SSE subscriber",
      );
      end("slow_consumer");
    }
  };

  const writeControl = (event: StreamEvent) => {
    if (event.type === "reset") position = "";
    write(encodeSseMessage(position, event), position);
  };

  const unregister = registry.add({ end });
  deps.metrics?.streamOpened();
  request.signal.addEventListener("abort", release);

  // Each ping first checks that the token is still valid (one timer shared by all streams).
  stopWatchingToken = watchTokenExpiry({
    streamTokens: services.streamTokens,
    token,
    threadId: claims.threadId,
    expiresAt: claims.expiresAt,
    intervalMs: config.pingIntervalMs,
    onValid: () => write(pingComment),
    onExpired: () => end("token_expired"),
  });

  feed = openThreadFeed({
    bus: services.events,
    tenantId: claims.tenantId,
    threadId: claims.threadId,
    lastEventId: options.lastEventId,
    // Half the allowance: room is left for live events that arrive before the socket drains.
    maxReplayBytes: config.subscriberBufferBytes / 2,
    onItem: (item) => {
      if (item.kind === "control") {
        writeControl(item.event);
        return;
      }
      position = item.delivered.id;
      write(encodeDeliveredEvent(item.delivered), position);
    },
  });
  // An overflow while the feed was being opened released the session before `feed` was assigned.
  if (released) feed.close();
  // A client that disconnected before we got here never fires `abort` again.
  if (request.signal.aborted) release();

  return new Response(queue.stream, { status: 200, headers: SSE_HEADERS });
}
