import { afterEach, describe, expect, test } from "bun:test";
import type { ThreadEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent } from "@promptrun/core";
import { createRedisThreadEventBus, type RedisThreadEventBus } from "./redis-thread-event-bus.ts";
import { checkRedis, eventually, TEST_REDIS_URL, testKeyPrefix } from "./test-redis.ts";

const available = await checkRedis();

const THREAD = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const RUN = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a60";
const clock = { now: () => new Date() };

const token = (index: number, runId = RUN): ThreadEvent => ({
  type: "run.token",
  data: { runId, channel: "default", index, delta: `t${index} ` },
});
const indexes = (events: DeliveredThreadEvent[]) =>
  events.map((delivered) => (delivered.event.type === "run.token" ? delivered.event.data.index : -1));
const ids = (events: DeliveredThreadEvent[]) => events.map((delivered) => delivered.id);

describe.skipIf(!available)("Redis thread event bus", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Buses of several "instances" on one key prefix. */
  const instances = async (count: number, prefix?: string) => {
    const keys = prefix ? { prefix, cleanup: async () => {} } : testKeyPrefix();
    if (!prefix) cleanups.push(keys.cleanup);
    const buses: RedisThreadEventBus[] = [];
    for (let index = 0; index < count; index++) {
      const bus = await createRedisThreadEventBus({
        url: TEST_REDIS_URL,
        keyPrefix: keys.prefix,
        replayBufferSeconds: 60,
        clock,
      });
      cleanups.push(() => bus.close());
      buses.push(bus);
    }
    return { buses, prefix: keys.prefix };
  };

  test("a subscriber on one instance gets another instance's events, in order, with the same ids", async () => {
    const {
      buses: [a, b],
    } = await instances(2);
    const onA: DeliveredThreadEvent[] = [];
    const onB: DeliveredThreadEvent[] = [];
    a!.subscribe("tenant", THREAD, (event) => onA.push(event));
    b!.subscribe("tenant", THREAD, (event) => onB.push(event));
    for (let index = 0; index < 50; index++) a!.publish("tenant", THREAD, token(index));
    await eventually(() => onA.length === 50 && onB.length === 50);
    expect(indexes(onB)).toEqual(Array.from({ length: 50 }, (_, index) => index));
    expect(ids(onB)).toEqual(ids(onA));
    const numeric = ids(onB).map(Number);
    for (let index = 1; index < numeric.length; index++)
      expect(numeric[index]!).toBeGreaterThan(numeric[index - 1]!);
    expect(onB[0]!.id).toMatch(/^\d{16}$/);
  });

  test("publishers on several instances: every subscriber sees one sequence of strictly increasing ids", async () => {
    const {
      buses: [a, b, c],
    } = await instances(3);
    const seen: DeliveredThreadEvent[][] = [[], [], []];
    for (const [index, bus] of [a, b, c].entries()) {
      bus!.subscribe("tenant", THREAD, (event) => {
        seen[index]!.push(event);
      });
    }
    for (let index = 0; index < 30; index++) {
      a!.publish("tenant", THREAD, token(index, "run-a"));
      b!.publish("tenant", THREAD, token(index, "run-b"));
    }
    await eventually(() => seen.every((events) => events.length === 60));
    expect(ids(seen[1]!)).toEqual(ids(seen[0]!));
    expect(ids(seen[2]!)).toEqual(ids(seen[0]!));
    const numeric = ids(seen[0]!).map(Number);
    for (let index = 1; index < numeric.length; index++)
      expect(numeric[index]!).toBeGreaterThan(numeric[index - 1]!);
    // Each publisher's events keep their order.
    for (const runId of ["run-a", "run-b"]) {
      const ofRun = seen[2]!.filter(
        (delivered) => "runId" in delivered.event.data && delivered.event.data.runId === runId,
      );
      expect(indexes(ofRun)).toEqual(Array.from({ length: 30 }, (_, index) => index));
    }
  });

  test("Last-Event-ID from one instance resumes on another, even on one started later", async () => {
    const {
      buses: [a, b],
      prefix,
    } = await instances(2);
    const onA: DeliveredThreadEvent[] = [];
    a!.subscribe("tenant", THREAD, (event) => onA.push(event));
    for (let index = 0; index < 10; index++) a!.publish("tenant", THREAD, token(index));
    await eventually(() => onA.length === 10);
    const resumeAfter = onA[3]!.id;
    await eventually(() => {
      const { replay, unsubscribe } = b!.subscribe("tenant", THREAD, () => {}, { lastEventId: resumeAfter });
      unsubscribe();
      return replay?.kind === "replayed" && replay.events.length === 6;
    });
    const replayOnB = b!.subscribe("tenant", THREAD, () => {}, { lastEventId: resumeAfter }).replay;
    expect(replayOnB?.kind === "replayed" && indexes(replayOnB.events)).toEqual([4, 5, 6, 7, 8, 9]);

    // An instance that starts now fills its buffer from the stream.
    const {
      buses: [late],
    } = await instances(1, prefix);
    const replayOnLate = late!.subscribe("tenant", THREAD, () => {}, { lastEventId: resumeAfter }).replay;
    expect(replayOnLate?.kind === "replayed" && ids(replayOnLate.events)).toEqual(ids(onA.slice(4)));
    // Older than anything the stream holds: reset.
    expect(
      late!.subscribe("tenant", THREAD, () => {}, { lastEventId: String(Number(onA[0]!.id) - 1) }).replay,
    ).toEqual({
      kind: "reset",
    });
    // Tenants stay apart.
    expect(late!.subscribe("other", THREAD, () => {}, { lastEventId: resumeAfter }).replay).toEqual({
      kind: "replayed",
      events: [],
    });
  });
});
