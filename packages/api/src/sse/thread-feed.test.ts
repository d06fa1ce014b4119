import { expect, test } from "bun:test";
import type { DeliveredThreadEvent, ReplayResult, ThreadEventBus } from "@promptrun/core";
import { encodeDeliveredEvent } from "./encode.ts";
import { type FeedItem, openThreadFeed, REPLAY_TOO_LARGE_REASON, RESET_REASON } from "./thread-feed.ts";

const THREAD = "0196f3c1-1f0e-7a3b-8b7c-1234567890ab";
const delivered = (id: string): DeliveredThreadEvent => ({
  id,
  event: { type: "run.token", data: { runId: THREAD, channel: "default", index: Number(id), delta: id } },
});

/** A bus whose subscribe() already delivers `during` (as a networked bus might) and returns `replay`. */
function busDelivering(during: DeliveredThreadEvent[], replay: ReplayResult | null) {
  const calls = { unsubscribed: 0, options: [] as unknown[] };
  let listener: ((event: DeliveredThreadEvent) => void) | null = null;
  const bus: ThreadEventBus = {
    publish() {},
    subscribe(_tenant, _thread, onEvent, options) {
      calls.options.push(options);
      listener = onEvent;
      for (const event of during) onEvent(event);
      return {
        replay,
        position: BUS_POSITION,
        unsubscribe: () => {
          calls.unsubscribed++;
        },
      };
    },
    close: async () => {},
  };
  return { bus, calls, emit: (event: DeliveredThreadEvent) => listener?.(event) };
}

/** What busDelivering's subscriptions report as the bus position. */
const BUS_POSITION = "100";

const describeItem = (item: FeedItem) => (item.kind === "control" ? item.event.type : item.delivered.id);

test("ready, then the replay, then events that arrived meanwhile (minus duplicates), then live ones", () => {
  const { bus, calls, emit } = busDelivering([delivered("3"), delivered("4")], {
    kind: "replayed",
    events: [delivered("2"), delivered("3")],
  });
  const items: FeedItem[] = [];
  const feed = openThreadFeed({
    bus,
    tenantId: "t",
    threadId: THREAD,
    lastEventId: "1",
    maxReplayBytes: 1_000_000,
    onItem: (item) => items.push(item),
  });
  emit(delivered("5"));
  expect(items.map(describeItem)).toEqual(["ready", "2", "3", "4", "5"]);
  // A resumed feed's ready keeps the client's own position.
  expect(items[0]).toMatchObject({ kind: "control", id: "1" });
  expect(calls.options).toEqual([{ lastEventId: "1" }]);
  feed.close();
  feed.close();
  emit(delivered("6"));
  expect(items).toHaveLength(5);
  expect(calls.unsubscribed).toBe(1);
});

test("a reset replay becomes a reset event after ready; no lastEventId asks for no replay", () => {
  const reset = busDelivering([], { kind: "reset" });
  const items: FeedItem[] = [];
  openThreadFeed({
    bus: reset.bus,
    tenantId: "t",
    threadId: THREAD,
    lastEventId: "9",
    maxReplayBytes: 1_000_000,
    onItem: (item) => items.push(item),
  });
  // Both carry the bus position: the stale id would make the next reconnect reset again.
  expect(items).toEqual([
    { kind: "control", id: BUS_POSITION, event: { type: "ready", data: { thread: THREAD } } },
    {
      kind: "control",
      id: BUS_POSITION,
      event: { type: "reset", data: { thread: THREAD, reason: RESET_REASON } },
    },
  ]);
  const fresh = busDelivering([], null);
  openThreadFeed({
    bus: fresh.bus,
    tenantId: "t",
    threadId: THREAD,
    lastEventId: null,
    maxReplayBytes: 1_000_000,
    onItem() {},
  });
  expect(fresh.calls.options).toEqual([undefined]);
});

test("a replay bigger than maxReplayBytes is replaced by a reset (live events still follow)", () => {
  const events = [delivered("1"), delivered("2")];
  const size = events.reduce((sum, event) => sum + encodeDeliveredEvent(event).byteLength, 0);
  const run = (maxReplayBytes: number) => {
    const { bus, emit } = busDelivering([], { kind: "replayed", events });
    const items: FeedItem[] = [];
    openThreadFeed({
      bus,
      tenantId: "t",
      threadId: THREAD,
      lastEventId: "0",
      maxReplayBytes,
      onItem: (item) => items.push(item),
    });
    emit(delivered("3"));
    return items;
  };
  expect(run(size).map(describeItem)).toEqual(["ready", "1", "2", "3"]);
  const tooLarge = run(size - 1);
  expect(tooLarge.map(describeItem)).toEqual(["ready", "reset", "3"]);
  expect(tooLarge[1]).toEqual({
    kind: "control",
    id: BUS_POSITION,
    event: { type: "reset", data: { thread: THREAD, reason: REPLAY_TOO_LARGE_REASON } },
  });
});

test("a fresh subscriber's ready carries the bus position, never an empty id", () => {
  const { bus } = busDelivering([], null);
  const items: FeedItem[] = [];
  openThreadFeed({
    bus,
    tenantId: "t",
    threadId: THREAD,
    lastEventId: null,
    maxReplayBytes: 1_000_000,
    onItem: (item) => items.push(item),
  });
  expect(items).toEqual([
    { kind: "control", id: BUS_POSITION, event: { type: "ready", data: { thread: THREAD } } },
  ]);
});
