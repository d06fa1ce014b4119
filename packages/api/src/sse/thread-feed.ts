import type { StreamEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent, ThreadEventBus } from "@promptrun/core";
import { encodeDeliveredEvent } from "./encode.ts";

export type FeedControlEvent = Extract<StreamEvent, { type: "ready" | "reset" }>;

/**
 * What a subscriber receives, in order: `ready`, then the replay (or `reset`), then live events.
 * Control events carry an id too (an empty SSE `id:` would reset the browser's Last-Event-ID):
 * `ready` the position the client resumes from, `reset` the bus position where live events begin.
 */
export type FeedItem =
  | { kind: "thread"; delivered: DeliveredThreadEvent }
  | { kind: "control"; id: string; event: FeedControlEvent };

/** Receives a feed's items without an item object per event (the SSE session implements it). */
export interface ThreadFeedSink {
  onThreadEvent(delivered: DeliveredThreadEvent): void;
  onControlEvent(event: FeedControlEvent, id: string): void;
}

/** Reasons of a `reset` event: the client must resynchronise (e.g. re-read its runs) instead of a replay. */
export const RESET_REASON = "last_event_id_not_in_buffer";
export const REPLAY_TOO_LARGE_REASON = "replay_exceeds_subscriber_buffer";

export interface ThreadFeed {
  close(): void;
}

export interface ThreadFeedOptions {
  bus: ThreadEventBus;
  tenantId: string;
  threadId: string;
  lastEventId: string | null;
  /**
   * Largest replay (in encoded bytes) handed over; a bigger one becomes a `reset`. Without it a
   * client far behind would be dropped as a slow consumer on every reconnect.
   */
  maxReplayBytes: number;
}

/** One subscriber's bus subscription: a listener closure and a few fields, nothing per event. */
class BusThreadFeed implements ThreadFeed {
  closed = false;
  /** Live events that arrived while the replay was handed over; null otherwise (the usual case). */
  private heldBack: DeliveredThreadEvent[] | null = null;
  private handingOverReplay = true;
  private readonly subscription: { unsubscribe(): void };
  /** The bus position when this feed subscribed: the id of `reset` (live events follow it). */
  private readonly position: string;

  constructor(options: ThreadFeedOptions, sink: ThreadFeedSink) {
    const { threadId, lastEventId } = options;
    const subscription = options.bus.subscribe(
      options.tenantId,
      threadId,
      (delivered) => {
        if (this.closed) return;
        if (!this.handingOverReplay) sink.onThreadEvent(delivered);
        else if (this.heldBack === null) this.heldBack = [delivered];
        else this.heldBack.push(delivered);
      },
      lastEventId === null ? undefined : { lastEventId },
    );
    this.subscription = subscription;
    this.position = subscription.position;

    const replay = subscription.replay;
    // A resumed client keeps its own position; everyone else starts at the bus's current one.
    const readyId = replay?.kind === "replayed" && lastEventId !== null ? lastEventId : this.position;
    sink.onControlEvent({ type: "ready", data: { thread: threadId } }, readyId);
    let replayedIds: Set<string> | null = null;
    if (replay?.kind === "replayed" && !this.closed) {
      let replayBytes = 0;
      for (const delivered of replay.events) replayBytes += encodeDeliveredEvent(delivered).byteLength;
      if (replayBytes > options.maxReplayBytes) {
        this.reset(sink, threadId, REPLAY_TOO_LARGE_REASON);
      } else if (replay.events.length > 0) {
        replayedIds = new Set();
        for (const delivered of replay.events) {
          replayedIds.add(delivered.id);
          if (!this.closed) sink.onThreadEvent(delivered);
        }
      }
    } else if (replay?.kind === "reset") {
      this.reset(sink, threadId, RESET_REASON);
    }
    this.handingOverReplay = false;
    const heldBack = this.heldBack;
    this.heldBack = null;
    if (heldBack === null) return;
    for (const delivered of heldBack) {
      if (!this.closed && !replayedIds?.has(delivered.id)) sink.onThreadEvent(delivered);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.heldBack = null;
    this.subscription.unsubscribe();
  }

  private reset(sink: ThreadFeedSink, thread: string, reason: string): void {
    if (!this.closed) sink.onControlEvent({ type: "reset", data: { thread, reason } }, this.position);
  }
}

/**
 * Subscribes to one tenant's thread on the bus. Events the bus delivers while the replay is still
 * being handed over are held back and passed on after it (duplicates of replayed ids dropped), so
 * a subscriber always sees one ordered sequence. Shared by the SSE endpoint and tRPC `onEvents`.
 */
export function subscribeThreadFeed(options: ThreadFeedOptions, sink: ThreadFeedSink): ThreadFeed {
  return new BusThreadFeed(options, sink);
}

/** subscribeThreadFeed with one callback taking tagged items. */
export function openThreadFeed(
  options: ThreadFeedOptions & { onItem: (item: FeedItem) => void },
): ThreadFeed {
  const { onItem } = options;
  return subscribeThreadFeed(options, {
    onThreadEvent: (delivered) => onItem({ kind: "thread", delivered }),
    onControlEvent: (event, id) => onItem({ kind: "control", id, event }),
  });
}
