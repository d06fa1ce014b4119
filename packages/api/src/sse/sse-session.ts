import type { DeliveredThreadEvent, StreamTokenClaims } from "@promptrun/core";
import type { ApiDeps } from "../deps.ts";
import { type ByteQueueOwner, ByteQueueStream } from "./byte-queue-stream.ts";
import { encodeDeliveredEvent, encodeSseMessage, pingComment } from "./encode.ts";
import type { EndableStream, EndReason, StreamRegistry } from "./stream-registry.ts";
import {
  type FeedControlEvent,
  subscribeThreadFeed,
  type ThreadFeed,
  type ThreadFeedSink,
} from "./thread-feed.ts";
import { type TokenEndReason, type TokenExpiryHandler, TokenExpiryWatch } from "./watch-token-expiry.ts";

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
  /** Called once when the session ends (end event queued, client gone). */
  onClose?: (() => void) | undefined;
}

/**
 * One subscriber as one object: it is the queue's owner, the feed's sink, the token watch's
 * handler, the registry's entry and the abort listener, so a session holds no closures of its own.
 */
class SseSession
  implements ByteQueueOwner, ThreadFeedSink, TokenExpiryHandler, EndableStream, EventListenerObject
{
  readonly queue: ByteQueueStream;
  private feed: ThreadFeed | null = null;
  private watch: TokenExpiryWatch | null = null;
  private released = false;
  /** `id:` of the newest event queued: what a reconnect should resume from. */
  private position: string;
  /** `id:` of `ready`: where a client that has taken nothing yet resumes. */
  private readyPosition: string | null = null;

  constructor(
    private readonly deps: ApiDeps,
    private readonly request: Request,
    private readonly registry: StreamRegistry,
    private readonly threadId: string,
    private readonly lastEventId: string | null,
    private readonly onClose: (() => void) | undefined,
  ) {
    // Replaced by the `ready` id before anything is written; "0" (older than any buffer) only
    // if the session ends before it subscribed.
    this.position = lastEventId ?? "0";
    this.queue = new ByteQueueStream(deps.config.subscriberBufferBytes, this);
  }

  open(token: string, claims: StreamTokenClaims): void {
    const { deps, request } = this;
    this.registry.add(this);
    deps.metrics?.streamOpened();
    request.signal.addEventListener("abort", this);
    // Each ping first checks that the token is still valid (one timer shared by all streams).
    this.watch = new TokenExpiryWatch(
      {
        streamTokens: deps.services.streamTokens,
        token,
        threadId: claims.threadId,
        expiresAt: claims.expiresAt,
        intervalMs: deps.config.pingIntervalMs,
      },
      this,
    );
    const feed = subscribeThreadFeed(
      {
        bus: deps.services.events,
        tenantId: claims.tenantId,
        threadId: claims.threadId,
        lastEventId: this.lastEventId,
        // Half the allowance: room is left for live events that arrive before the socket drains.
        maxReplayBytes: deps.config.subscriberBufferBytes / 2,
      },
      this,
    );
    this.feed = feed;
    // An overflow while the feed was being opened released the session before `feed` was assigned.
    if (this.released) feed.close();
    // A client that disconnected before we got here never fires `abort` again.
    if (request.signal.aborted) this.release();
  }

  /** Ends with an `end` event (registry: shutdown; also token expiry and slow consumers). */
  end(reason: EndReason): void {
    if (this.released) return;
    const discardBacklog = reason === "slow_consumer";
    // A dropped backlog never reaches the client: the end event must not advance its position.
    const endPosition = discardBacklog
      ? (this.queue.lastTakenEventId ?? this.readyPosition ?? this.position)
      : this.position;
    this.queue.finish(encodeSseMessage(endPosition, { type: "end", data: { reason } }), { discardBacklog });
    this.release();
  }

  onThreadEvent(delivered: DeliveredThreadEvent): void {
    this.position = delivered.id;
    this.write(encodeDeliveredEvent(delivered), delivered.id);
  }

  onControlEvent(event: FeedControlEvent, id: string): void {
    if (event.type === "ready") this.readyPosition = id;
    this.position = id;
    this.write(encodeSseMessage(id, event), id);
  }

  onTokenValid(): void {
    this.write(pingComment);
  }

  onTokenExpired(reason: TokenEndReason): void {
    this.end(reason);
  }

  /** The reader went away (client disconnect). */
  onCancel(): void {
    this.release();
  }

  /** `abort` of the request signal. */
  handleEvent(): void {
    this.release();
  }

  private write(chunk: Uint8Array, eventId?: string): void {
    if (this.queue.write(chunk, eventId) !== "overflow") return;
    this.deps.logger.info(
      { thread: this.threadId, queuedBytes: this.queue.queuedBytes },
      "dropping slow SSE subscriber",
    );
    this.end("slow_consumer");
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.feed?.close();
    this.watch?.stop();
    this.request.signal.removeEventListener("abort", this);
    this.registry.remove(this);
    this.deps.metrics?.streamClosed();
    this.onClose?.();
  }
}

/**
 * One subscriber's SSE response: `ready`, replay or `reset`, live events, `: ping` comments.
 * Ends with an `end` event on shutdown, token expiry (checked at each ping) or when the
 * subscriber falls `subscriberBufferBytes` behind; a client disconnect frees everything.
 */
export function openSseSession(options: SseSessionOptions): Response {
  const { deps, request, claims } = options;
  const session = new SseSession(
    deps,
    request,
    options.registry,
    claims.threadId,
    options.lastEventId,
    options.onClose,
  );
  session.open(options.token, claims);
  return new Response(session.queue.stream, { status: 200, headers: SSE_HEADERS });
}
