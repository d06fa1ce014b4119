import type { StreamEvent } from "@promptrun/contract";
import type { StreamTokenClaims } from "@promptrun/core";
import type { ApiDeps } from "../deps.ts";
import { createByteQueueStream } from "./byte-queue-stream.ts";
import { encodeDeliveredEvent, encodeSseMessage, pingComment } from "./encode.ts";
import type { EndReason, StreamRegistry } from "./stream-registry.ts";
import { openThreadFeed, type ThreadFeed } from "./thread-feed.ts";

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
  let pingTimer: ReturnType<typeof setInterval> | undefined;
  let released = false;
  /** `id:` of the newest event queued: what a reconnect should resume from. */
  let position = options.lastEventId ?? "";

  const release = () => {
    if (released) return;
    released = true;
    feed?.close();
    clearInterval(pingTimer);
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

  let checkingToken = false;
  pingTimer = setInterval(() => {
    if (checkingToken) return;
    checkingToken = true;
    // Re-verifying (rather than comparing exp with the wall clock) keeps the services' clock the only one.
    services.streamTokens
      .verify(token, claims.threadId)
      .then(
        () => write(pingComment),
        () => end("token_expired"),
      )
      .finally(() => {
        checkingToken = false;
      });
  }, config.pingIntervalMs);

  feed = openThreadFeed({
    bus: services.events,
    tenantId: claims.tenantId,
    threadId: claims.threadId,
    lastEventId: options.lastEventId,
    onItem: (item) => {
      if (item.kind === "control") {
        writeControl(item.event);
        return;
      }
      position = item.delivered.id;
      write(encodeDeliveredEvent(item.delivered), position);
    },
  });
  // The replay alone may have overflowed the buffer (release ran before `feed` was assigned).
  if (released) feed.close();
  // A client that disconnected before we got here never fires `abort` again.
  if (request.signal.aborted) release();

  return new Response(queue.stream, { status: 200, headers: SSE_HEADERS });
}
