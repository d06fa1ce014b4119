import { afterEach, describe, expect, test } from "bun:test";
import type { ThreadEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent } from "../ports.ts";
import { manualClock } from "../testing/clock.ts";
import { createInMemoryThreadEventBus, type InMemoryThreadEventBus } from "./in-memory-thread-event-bus.ts";

const THREAD = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const RUN = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a60";

const token = (index: number): ThreadEvent => ({
  type: "run.token",
  data: { runId: RUN, channel: "default", index, delta: `t${index}` },
});

const indexes = (events: DeliveredThreadEvent[]) =>
  events.map((delivered) => (delivered.event.type === "run.token" ? delivered.event.data.index : -1));

const buses: InMemoryThreadEventBus[] = [];
const makeBus = (options: Partial<Parameters<typeof createInMemoryThreadEventBus>[0]> = {}) => {
  const clock = manualClock();
  const bus = createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock, ...options });
  buses.push(bus);
  return { bus, clock: (options.clock as ReturnType<typeof manualClock> | undefined) ?? clock };
};

afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
});

/** Publishes and returns the id the event got (seen through a subscriber). */
const publishAndGetId = (bus: InMemoryThreadEventBus, tenant: string, event: ThreadEvent): string => {
  let id = "";
  const { unsubscribe } = bus.subscribe(tenant, THREAD, (delivered) => {
    id = delivered.id;
  });
  bus.publish(tenant, THREAD, event);
  unsubscribe();
  return id;
};

describe("in-memory thread event bus", () => {
  test("delivers live events with strictly increasing decimal ids", () => {
    const { bus } = makeBus();
    const received: DeliveredThreadEvent[] = [];
    bus.subscribe("tenant-a", THREAD, (event) => received.push(event));
    for (let index = 0; index < 5; index++) bus.publish("tenant-a", THREAD, token(index));
    expect(indexes(received)).toEqual([0, 1, 2, 3, 4]);
    const ids = received.map((event) => BigInt(event.id));
    for (let index = 1; index < ids.length; index++) expect(ids[index]! > ids[index - 1]!).toBe(true);
    expect(received[0]!.id).toMatch(/^\d+$/);
  });

  test("isolates tenants that use the same thread id", () => {
    const { bus } = makeBus();
    const tenantA: DeliveredThreadEvent[] = [];
    const tenantB: DeliveredThreadEvent[] = [];
    bus.subscribe("tenant-a", THREAD, (event) => tenantA.push(event));
    bus.subscribe("tenant-b", THREAD, (event) => tenantB.push(event));
    bus.publish("tenant-a", THREAD, token(1));
    expect(indexes(tenantA)).toEqual([1]);
    expect(tenantB).toEqual([]);
    const replay = bus.subscribe("tenant-b", THREAD, () => {}, { lastEventId: tenantA[0]!.id }).replay;
    expect(replay).toEqual({ kind: "replayed", events: [] });
  });

  test("replays events after Last-Event-ID from the buffer kept while nobody listens", () => {
    const { bus } = makeBus();
    const firstId = publishAndGetId(bus, "t", token(0));
    bus.publish("t", THREAD, token(1));
    bus.publish("t", THREAD, token(2));
    const { replay } = bus.subscribe("t", THREAD, () => {}, { lastEventId: firstId });
    expect(replay?.kind).toBe("replayed");
    if (replay?.kind !== "replayed") throw new Error("expected a replay");
    expect(indexes(replay.events)).toEqual([1, 2]);
    const lastId = replay.events[1]!.id;
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: lastId }).replay).toEqual({
      kind: "replayed",
      events: [],
    });
    expect(bus.subscribe("t", THREAD, () => {}).replay).toBeNull();
  });

  test("an unparsable id, or one from before the bus existed, gets reset", () => {
    const { bus } = makeBus();
    bus.publish("t", THREAD, token(0));
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: "abc" }).replay).toEqual({ kind: "reset" });
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: "-1" }).replay).toEqual({ kind: "reset" });
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: "42" }).replay).toEqual({ kind: "reset" });
  });

  test("drops events older than the buffer age and resets ids older than the oldest kept", () => {
    const { bus, clock } = makeBus({ replayBufferSeconds: 10 });
    const zero = publishAndGetId(bus, "t", token(0));
    clock.advance(5_000);
    const one = publishAndGetId(bus, "t", token(1));
    clock.advance(6_000); // token 0 is now 11 s old: dropped
    bus.publish("t", THREAD, token(2));
    const afterOne = bus.subscribe("t", THREAD, () => {}, { lastEventId: one }).replay;
    expect(afterOne?.kind === "replayed" && indexes(afterOne.events)).toEqual([2]);
    // Nothing after `zero` was lost: token 1 is still buffered.
    const afterZero = bus.subscribe("t", THREAD, () => {}, { lastEventId: zero }).replay;
    expect(afterZero?.kind === "replayed" && indexes(afterZero.events)).toEqual([1, 2]);
    clock.advance(5_000); // token 1 dropped too
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: zero }).replay).toEqual({ kind: "reset" });
  });

  test("bounds the buffer by count", () => {
    const { bus } = makeBus({ maxBufferedEventsPerThread: 3 });
    const ids: string[] = [];
    bus.subscribe("t", THREAD, (event) => ids.push(event.id));
    for (let index = 0; index < 5; index++) bus.publish("t", THREAD, token(index));
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: ids[0]! }).replay).toEqual({ kind: "reset" });
    const replay = bus.subscribe("t", THREAD, () => {}, { lastEventId: ids[1]! }).replay;
    expect(replay?.kind === "replayed" && indexes(replay.events)).toEqual([2, 3, 4]);
  });

  test("forgets idle threads (timer sweep) yet still resets an id whose successors were dropped", async () => {
    const { bus, clock } = makeBus({ replayBufferSeconds: 1, pruneIntervalMs: 5 });
    const missedOne = publishAndGetId(bus, "t", token(0));
    const sawAll = publishAndGetId(bus, "t", token(1));
    expect(bus.threadCount()).toBe(1);
    clock.advance(2_000);
    const deadline = Date.now() + 5_000;
    while (bus.threadCount() > 0 && Date.now() < deadline) await Bun.sleep(5);
    expect(bus.threadCount()).toBe(0);
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: missedOne }).replay).toEqual({
      kind: "reset",
    });
    expect(bus.subscribe("t", THREAD, () => {}, { lastEventId: sawAll }).replay).toEqual({
      kind: "replayed",
      events: [],
    });
  });

  test("keeps a thread while it has listeners and forgets it when the last one leaves", () => {
    const { bus, clock } = makeBus({ replayBufferSeconds: 1 });
    const first = bus.subscribe("t", THREAD, () => {});
    const second = bus.subscribe("t", THREAD, () => {});
    expect(bus.threadCount()).toBe(1);
    first.unsubscribe();
    first.unsubscribe();
    expect(bus.threadCount()).toBe(1);
    second.unsubscribe();
    expect(bus.threadCount()).toBe(0);
    bus.publish("t", THREAD, token(0));
    clock.advance(1_500);
    bus.subscribe("t", THREAD, () => {}).unsubscribe(); // lazy prune on use
    expect(bus.threadCount()).toBe(0);
  });

  test("a throwing listener breaks neither publish nor the other listeners", () => {
    const errors: unknown[] = [];
    const { bus } = makeBus({ onListenerError: (error) => errors.push(error) });
    const received: number[] = [];
    bus.subscribe("t", THREAD, () => {
      throw new Error("listener bug");
    });
    bus.subscribe("t", THREAD, (event) => received.push(indexes([event])[0]!));
    expect(() => bus.publish("t", THREAD, token(7))).not.toThrow();
    expect(received).toEqual([7]);
    expect(errors).toHaveLength(1);
  });

  test("unsubscribed listeners get nothing more", () => {
    const { bus } = makeBus();
    const received: DeliveredThreadEvent[] = [];
    const { unsubscribe } = bus.subscribe("t", THREAD, (event) => received.push(event));
    bus.publish("t", THREAD, token(0));
    unsubscribe();
    bus.publish("t", THREAD, token(1));
    expect(indexes(received)).toEqual([0]);
  });

  test("fans out to 10k listeners sharing one delivered object per event", () => {
    const { bus } = makeBus();
    const seen = new Set<DeliveredThreadEvent>();
    let calls = 0;
    for (let listener = 0; listener < 10_000; listener++) {
      bus.subscribe("t", THREAD, (event) => {
        calls++;
        seen.add(event);
      });
    }
    for (let index = 0; index < 50; index++) bus.publish("t", THREAD, token(index));
    expect(calls).toBe(500_000);
    expect(seen.size).toBe(50);
  });

  test("ids keep increasing across bus instances (a restart)", () => {
    const clock = manualClock();
    const first = createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock });
    buses.push(first);
    let lastOfFirst = 0n;
    first.subscribe("t", THREAD, (event) => {
      lastOfFirst = BigInt(event.id);
    });
    for (let index = 0; index < 3000; index++) first.publish("t", THREAD, token(index));
    clock.advance(5);
    const second = createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock });
    buses.push(second);
    let firstOfSecond = 0n;
    second.subscribe("t", THREAD, (event) => {
      firstOfSecond ||= BigInt(event.id);
    });
    second.publish("t", THREAD, token(0));
    expect(firstOfSecond > lastOfFirst).toBe(true);
    // The new process lost the old buffer: an old id must resynchronise.
    expect(second.subscribe("t", THREAD, () => {}, { lastEventId: String(lastOfFirst) }).replay).toEqual({
      kind: "reset",
    });
  });
});
