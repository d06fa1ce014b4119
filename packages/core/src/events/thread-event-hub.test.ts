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
