import type { StreamEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent, ThreadEventBus } from "@promptrun/core";

/** What a subscriber receives, in order: `ready`, then the replay (or `reset`), then live events. */
export type FeedItem =
  | { kind: "thread"; delivered: DeliveredThreadEvent }
  | { kind: "control"; event: Extract<StreamEvent, { type: "ready" | "reset" }> };

export const RESET_REASON = "last_event_id_not_in_buffer";

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
  if (subscription.replay?.kind === "replayed") {
    for (const delivered of subscription.replay.events) {
      replayedIds.add(delivered.id);
      emit({ kind: "thread", delivered });
    }
  } else if (subscription.replay?.kind === "reset") {
    emit({ kind: "control", event: { type: "reset", data: { thread: threadId, reason: RESET_REASON } } });
  }
  handingOverReplay = false;
  for (const delivered of heldBack.splice(0)) {
    if (!replayedIds.has(delivered.id)) emit({ kind: "thread", delivered });
  }
  return feed;
}
