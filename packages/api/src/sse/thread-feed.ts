import type { StreamEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent, ThreadEventBus } from "@promptrun/core";
import { encodeDeliveredEvent } from "./encode.ts";

/** What a subscriber receives, in order: `ready`, then the replay (or `reset`), then live events. */
export type FeedItem =
  | { kind: "thread"; delivered: DeliveredThreadEvent }
  | { kind: "control"; event: Extract<StreamEvent, { type: "ready" | "reset" }> };

/** Reasons of a `reset` event: the client must resynchronise (e.g. re-read its runs) instead of a replay. */
export const RESET_REASON = "last_event_id_not_in_buffer";
export const REPLAY_TOO_LARGE_REASON = "replay_exceeds_subscriber_buffer";

export interface ThreadFeed {
  close(): void;
}

/**
 * Subscribes to one tenant's thread on the bus. Events the bus delivers while the replay is still
 * being handed over are held back and passed on after it (duplicates of replayed ids dropped), so
 * a subscriber always sees one ordered sequence. Shared by the SSE endpoint and tRPC `onEvents`.
 */
export function openThreadFeed(options: {
  bus: ThreadEventBus;
  tenantId: string;
  threadId: string;
  lastEventId: string | null;
  /**
   * Largest replay (in encoded bytes) handed over; a bigger one becomes a `reset`. Without it a
   * client far behind would be dropped as a slow consumer on every reconnect.
   */
  maxReplayBytes: number;
  onItem: (item: FeedItem) => void;
}): ThreadFeed {
  const { bus, tenantId, threadId, lastEventId, onItem } = options;
  let handingOverReplay = true;
  let closed = false;
  const heldBack: DeliveredThreadEvent[] = [];

  const subscription = bus.subscribe(
    tenantId,
    threadId,
    (delivered) => {
      if (closed) return;
      if (handingOverReplay) heldBack.push(delivered);
      else onItem({ kind: "thread", delivered });
    },
    lastEventId === null ? undefined : { lastEventId },
  );

  const feed: ThreadFeed = {
    close() {
      if (closed) return;
      closed = true;
      heldBack.length = 0;
      subscription.unsubscribe();
    },
  };

  const emit = (item: FeedItem) => {
    if (!closed) onItem(item);
  };
  emit({ kind: "control", event: { type: "ready", data: { thread: threadId } } });
  const replayedIds = new Set<string>();
  const reset = (reason: string) =>
    emit({ kind: "control", event: { type: "reset", data: { thread: threadId, reason } } });
  const replay = subscription.replay;
  if (replay?.kind === "replayed") {
    const replayBytes = replay.events.reduce(
      (sum, delivered) => sum + encodeDeliveredEvent(delivered).byteLength,
      0,
    );
    if (replayBytes > options.maxReplayBytes) {
      reset(REPLAY_TOO_LARGE_REASON);
    } else {
      for (const delivered of replay.events) {
        replayedIds.add(delivered.id);
        emit({ kind: "thread", delivered });
      }
    }
  } else if (replay?.kind === "reset") {
    reset(RESET_REASON);
  }
  handingOverReplay = false;
  for (const delivered of heldBack.splice(0)) {
    if (!replayedIds.has(delivered.id)) emit({ kind: "thread", delivered });
  }
  return feed;
}
