import { afterEach, describe, expect, test } from "bun:test";
import type { ThreadEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent } from "../ports.ts";
import { manualClock } from "../testing/clock.ts";
import { createThreadEventHub, parseEventId, type ThreadEventHub } from "./thread-event-hub.ts";

const THREAD = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const RUN = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a60";
/** Sequences as a shared feed assigns them: µs-like, well after knownSince. */
const BASE = 1_700_000_000_000_000;

const token = (index: number): ThreadEvent => ({
  type: "run.token",
  data: { runId: RUN, channel: "default", index, delta: `t${index}` },
});

const ids = (events: DeliveredThreadEvent[]) => events.map((delivered) => delivered.id);

const hubs: ThreadEventHub[] = [];
const makeHub = () => {
  const clock = manualClock(new Date(BASE / 1000));
  const hub = createThreadEventHub({ replayBufferSeconds: 60, clock, knownSince: BASE });
  hubs.push(hub);
  return { hub, clock };
};
afterEach(() => {
  for (const hub of hubs.splice(0)) hub.close();
});

describe("thread event hub", () => {
  test("keeps the ids it is given and replays after a Last-Event-ID", () => {
    const { hub } = makeHub();
    for (let index = 0; index < 3; index++) hub.deliver("t", THREAD, BASE + 10 + index, token(index));
    const received: DeliveredThreadEvent[] = [];
    const { replay } = hub.subscribe("t", THREAD, (event) => received.push(event), {
      lastEventId: String(BASE + 10),
    });
    expect(replay?.kind === "replayed" && ids(replay.events)).toEqual([String(BASE + 11), String(BASE + 12)]);
    hub.deliver("t", THREAD, BASE + 13, token(3));
    expect(ids(received)).toEqual([String(BASE + 13)]);
  });

  test("a resumed subscriber never receives an event at or before its Last-Event-ID, live ones included", () => {
    const { hub } = makeHub();
    const received: DeliveredThreadEvent[] = [];
    // It saw up to BASE + 20 elsewhere; this feed lags and delivers BASE + 19 and + 20 late.
    const { replay } = hub.subscribe("t", THREAD, (event) => received.push(event), {
      lastEventId: String(BASE + 20),
    });
    expect(replay).toEqual({ kind: "replayed", events: [] });
    for (const sequence of [BASE + 19, BASE + 20, BASE + 21]) hub.deliver("t", THREAD, sequence, token(0));
    expect(ids(received)).toEqual([String(BASE + 21)]);
  });

  test("ids older than knownSince or a reset get `reset`; later ones replay", () => {
    const { hub } = makeHub();
    expect(hub.subscribe("t", THREAD, () => {}, { lastEventId: String(BASE - 1) }).replay).toEqual({
      kind: "reset",
    });
    hub.deliver("t", THREAD, BASE + 1, token(0));
    hub.deliver("t", THREAD, BASE + 2, token(1));
    // A gap in the feed: everything before BASE + 100 is doubtful now.
    hub.resetBefore(BASE + 100);
    expect(hub.subscribe("t", THREAD, () => {}, { lastEventId: String(BASE + 1) }).replay).toEqual({
      kind: "reset",
    });
    hub.deliver("t", THREAD, BASE + 101, token(2));
    const { replay } = hub.subscribe("t", THREAD, () => {}, { lastEventId: String(BASE + 100) });
    expect(replay?.kind === "replayed" && ids(replay.events)).toEqual([String(BASE + 101)]);
    expect(hub.subscribe("t", THREAD, () => {}, { lastEventId: "not-a-number" }).replay).toEqual({
      kind: "reset",
    });
    // An id far in the future was never issued: reset, and live events still arrive.
    const received: DeliveredThreadEvent[] = [];
    const future = String(BASE + 3_600_000_000);
    expect(
      hub.subscribe("t", THREAD, (event) => received.push(event), { lastEventId: future }).replay,
    ).toEqual({
      kind: "reset",
    });
    hub.deliver("t", THREAD, BASE + 102, token(3));
    expect(ids(received)).toEqual([String(BASE + 102)]);
  });

  test("parseEventId accepts decimal integers only", () => {
    expect(parseEventId("1795310413545616")).toBe(1795310413545616);
    expect(parseEventId("-1")).toBeNull();
    expect(parseEventId("1e5")).toBeNull();
    expect(parseEventId("99999999999999999")).toBeNull();
  });
});

/**
 * A thread with one listener holds it directly; a Set exists only from the second. These walk
 * the transitions between the two while events flow, including changes made from inside a
 * listener during delivery.
 */
describe("thread event hub listeners (one-subscriber fast path)", () => {
  /** Records which listener saw which sequence, in delivery order. */
  const journal = () => {
    const seen: string[] = [];
    const listener = (name: string) => (event: DeliveredThreadEvent) => {
      seen.push(`${name}:${Number(event.id) - BASE}`);
    };
    return { seen, listener };
  };
  const deliver = (hub: ThreadEventHub, offset: number) =>
    hub.deliver("t", THREAD, BASE + offset, token(offset));

  test("one subscriber gets each event once; a second added later gets the later ones; both in order", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    hub.subscribe("t", THREAD, listener("a"));
    deliver(hub, 1);
    hub.subscribe("t", THREAD, listener("b"));
    deliver(hub, 2);
    hub.subscribe("t", THREAD, listener("c"));
    deliver(hub, 3);
    expect(seen).toEqual(["a:1", "a:2", "b:2", "a:3", "b:3", "c:3"]);
  });

  test("removing two subscribers in either order leaves the other one, then none; the idle thread is forgotten", () => {
    for (const firstRemoved of ["a", "b"] as const) {
      const { hub } = makeHub();
      const { seen, listener } = journal();
      const a = hub.subscribe("t", THREAD, listener("a"));
      const b = hub.subscribe("t", THREAD, listener("b"));
      const [first, second] = firstRemoved === "a" ? [a, b] : [b, a];
      const remaining = firstRemoved === "a" ? "b" : "a";
      first.unsubscribe();
      deliver(hub, 1);
      expect(seen).toEqual([`${remaining}:1`]);
      second.unsubscribe();
      deliver(hub, 2);
      expect(seen).toEqual([`${remaining}:1`]);
      // A newcomer after both left is the thread's single subscriber again and hears only new events.
      const c = hub.subscribe("t", THREAD, listener("c"));
      deliver(hub, 3);
      expect(seen).toEqual([`${remaining}:1`, "c:3"]);
      c.unsubscribe();
      // With no listeners and no buffered events left, the thread is dropped.
      hub.resetBefore(BASE + 100);
      expect(hub.threadCount()).toBe(0);
    }
  });

  test("a thread without events is forgotten when its last subscriber leaves, whichever leaves last", () => {
    const { hub } = makeHub();
    const a = hub.subscribe("t", THREAD, () => {});
    expect(hub.threadCount()).toBe(1);
    a.unsubscribe();
    expect(hub.threadCount()).toBe(0);
    const b = hub.subscribe("t", THREAD, () => {});
    const c = hub.subscribe("t", THREAD, () => {});
    b.unsubscribe();
    expect(hub.threadCount()).toBe(1);
    c.unsubscribe();
    expect(hub.threadCount()).toBe(0);
  });

  test("unsubscribing twice is harmless and never removes another subscriber", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    const a = hub.subscribe("t", THREAD, listener("a"));
    a.unsubscribe();
    const b = hub.subscribe("t", THREAD, listener("b"));
    // `b` now holds the single slot `a` had: a stale unsubscribe must not clear it.
    a.unsubscribe();
    deliver(hub, 1);
    const c = hub.subscribe("t", THREAD, listener("c"));
    b.unsubscribe();
    b.unsubscribe();
    deliver(hub, 2);
    // Detached calls work too (callers keep only the function).
    const { unsubscribe } = c;
    unsubscribe();
    unsubscribe();
    deliver(hub, 3);
    expect(seen).toEqual(["b:1", "c:2"]);
    expect(hub.threadCount()).toBe(1); // buffered events only
  });

  test("a second subscriber added during the single subscriber's delivery gets that event once, then later ones", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    let added = false;
    hub.subscribe("t", THREAD, (event) => {
      listener("a")(event);
      if (added) return;
      added = true;
      hub.subscribe("t", THREAD, listener("b"));
    });
    deliver(hub, 1);
    deliver(hub, 2);
    expect(seen).toEqual(["a:1", "b:1", "a:2", "b:2"]);
  });

  test("subscribers added from a listener while several are being walked also get that event", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    let added = 0;
    hub.subscribe("t", THREAD, listener("a"));
    hub.subscribe("t", THREAD, (event) => {
      listener("b")(event);
      if (added++ === 0) hub.subscribe("t", THREAD, listener("c"));
    });
    deliver(hub, 1);
    deliver(hub, 2);
    expect(seen).toEqual(["a:1", "b:1", "c:1", "a:2", "b:2", "c:2"]);
  });

  test("the single subscriber replacing itself during delivery hands the event to its replacement", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    const a = hub.subscribe("t", THREAD, (event) => {
      listener("a")(event);
      a.unsubscribe();
      hub.subscribe("t", THREAD, listener("b"));
    });
    deliver(hub, 1);
    deliver(hub, 2);
    expect(seen).toEqual(["a:1", "b:1", "b:2"]);
  });

  test("adding a second subscriber during delivery and then leaving reaches the newcomer, not the leaver", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    const a = hub.subscribe("t", THREAD, (event) => {
      listener("a")(event);
      hub.subscribe("t", THREAD, listener("b"));
      a.unsubscribe();
    });
    deliver(hub, 1);
    deliver(hub, 2);
    expect(seen).toEqual(["a:1", "b:1", "b:2"]);
  });

  test("a subscriber removed by another listener mid-delivery misses that event", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    let b: { unsubscribe: () => void } | null = null;
    hub.subscribe("t", THREAD, (event) => {
      listener("a")(event);
      b?.unsubscribe();
    });
    b = hub.subscribe("t", THREAD, listener("b"));
    deliver(hub, 1);
    deliver(hub, 2);
    expect(seen).toEqual(["a:1", "a:2"]);
  });

  test("a subscriber added during delivery is not handed the same event again by its replay", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    deliver(hub, 1);
    let replayed = null as string[] | null;
    hub.subscribe("t", THREAD, (event) => {
      listener("a")(event);
      if (replayed !== null) return;
      const late = hub.subscribe("t", THREAD, listener("b"), { lastEventId: String(BASE + 1) });
      replayed = late.replay?.kind === "replayed" ? ids(late.replay.events) : null;
    });
    deliver(hub, 2);
    expect(replayed).toEqual([]);
    expect(seen).toEqual(["a:2", "b:2"]);
  });

  test("a throwing listener is reported and does not stop delivery, buffering or later events", () => {
    const errors: unknown[] = [];
    const clock = manualClock(new Date(BASE / 1000));
    const hub = createThreadEventHub({
      replayBufferSeconds: 60,
      clock,
      knownSince: BASE,
      onListenerError: (error) => errors.push(error),
    });
    hubs.push(hub);
    const { seen, listener } = journal();
    const boom = new Error("listener failed");
    // Alone (the direct slot) first, then ahead of another subscriber (the Set).
    hub.subscribe("t", THREAD, (event) => {
      listener("a")(event);
      throw boom;
    });
    deliver(hub, 1);
    hub.subscribe("t", THREAD, listener("b"));
    deliver(hub, 2);
    expect(seen).toEqual(["a:1", "a:2", "b:2"]);
    expect(errors).toEqual([boom, boom]);
    const { replay } = hub.subscribe("t", THREAD, () => {}, { lastEventId: String(BASE) });
    expect(replay?.kind === "replayed" && ids(replay.events)).toEqual([String(BASE + 1), String(BASE + 2)]);
  });

  test("without onListenerError a throwing listener is swallowed", () => {
    const { hub } = makeHub();
    const { seen, listener } = journal();
    hub.subscribe("t", THREAD, () => {
      throw new Error("ignored");
    });
    hub.subscribe("t", THREAD, listener("b"));
    expect(() => deliver(hub, 1)).not.toThrow();
    expect(seen).toEqual(["b:1"]);
  });
});

describe("thread event hub: the last listener leaving during delivery", () => {
  test("the event stays replayable when a thread's only listener leaves while receiving its first event", () => {
    for (const listeners of [1, 2]) {
      const { hub } = makeHub();
      const subscriptions: Array<{ unsubscribe: () => void }> = [];
      for (let index = 0; index < listeners; index++)
        subscriptions.push(
          hub.subscribe("t", THREAD, () => {
            for (const subscription of subscriptions) subscription.unsubscribe();
          }),
        );
      hub.deliver("t", THREAD, BASE + 1, token(1));
      const { replay } = hub.subscribe("t", THREAD, () => {}, { lastEventId: String(BASE) });
      expect(replay?.kind === "replayed" && ids(replay.events)).toEqual([String(BASE + 1)]);
    }
  });
});
