import { describe, expect, test } from "bun:test";
import { manualClock } from "../testing/clock.ts";
import { createPendingRunCounter } from "./pending-run-counter.ts";

/** A store count the test sets, recording how often it was asked. */
function fakeCount(initial: number) {
  const state = { pending: initial, asked: 0 };
  const countPending = async () => {
    state.asked++;
    return state.pending;
  };
  return { state, countPending };
}

describe("PendingRunCounter", () => {
  test("counts in the store once, then admits from memory up to the cap", async () => {
    const clock = manualClock();
    const { state, countPending } = fakeCount(1);
    const counter = createPendingRunCounter({ countPending, clock });
    for (let admitted = 0; admitted < 2; admitted++) {
      const reservation = await counter.reserve("t1", 3);
      expect(reservation).not.toBeNull();
      reservation?.created();
    }
    expect(await counter.reserve("t1", 3)).toBeNull();
    expect(state.asked).toBe(1);
  });

  test("counts primed at start are used without asking the store; one instance never recounts by age", async () => {
    const clock = manualClock();
    const { state, countPending } = fakeCount(3);
    const counter = createPendingRunCounter({ countPending, clock, maxAgeMs: Number.POSITIVE_INFINITY });
    counter.prime([
      { tenantId: "t1", count: 2 },
      { tenantId: "t1", count: 1 },
    ]);
    clock.advance(3_600_000);
    expect(await counter.reserve("t1", 4)).not.toBeNull();
    expect(state.asked).toBe(0);
    // 2 + 1 primed and one reserved: the cap of 4 is reached, so the store is asked (it has 3).
    expect(await counter.reserve("t1", 4)).toBeNull();
    expect(state.asked).toBe(1);
    // An unprimed tenant is counted in the store on its first create.
    expect(await counter.reserve("t2", 4)).not.toBeNull();
    expect(state.asked).toBe(2);
  });

  test("at the cap it recounts at most every recountAtCapMs; a recount sees runs that ended", async () => {
    const clock = manualClock();
    const { state, countPending } = fakeCount(3);
    const counter = createPendingRunCounter({ countPending, clock, recountAtCapMs: 250 });
    expect(await counter.reserve("t1", 3)).toBeNull();
    state.pending = 1;
    expect(await counter.reserve("t1", 3)).toBeNull();
    expect(state.asked).toBe(1);
    clock.advance(250);
    expect(await counter.reserve("t1", 3)).not.toBeNull();
    expect(state.asked).toBe(2);
  });

  test("a count older than maxAgeMs is taken again (runs accepted by other instances)", async () => {
    const clock = manualClock();
    const { state, countPending } = fakeCount(0);
    const counter = createPendingRunCounter({ countPending, clock, maxAgeMs: 5_000 });
    (await counter.reserve("t1", 10))?.created();
    state.pending = 10;
    clock.advance(4_999);
    expect(await counter.reserve("t1", 10)).not.toBeNull();
    clock.advance(1);
    expect(await counter.reserve("t1", 10)).toBeNull();
  });

  test("runs being created count; abandoned ones free their place; tenants are separate", async () => {
    const clock = manualClock();
    const { countPending } = fakeCount(0);
    const counter = createPendingRunCounter({ countPending, clock });
    const first = await counter.reserve("t1", 2);
    const second = await counter.reserve("t1", 2);
    expect(await counter.reserve("t1", 2)).toBeNull();
    expect(await counter.reserve("t2", 2)).not.toBeNull();
    second?.abandoned();
    second?.abandoned();
    first?.created();
    expect(await counter.reserve("t1", 2)).not.toBeNull();
    expect(await counter.reserve("t1", 2)).toBeNull();
  });

  test("concurrent first requests share one count; a cancel frees a place at once", async () => {
    const clock = manualClock();
    const { state, countPending } = fakeCount(1);
    const counter = createPendingRunCounter({ countPending, clock });
    const reservations = await Promise.all([counter.reserve("t1", 2), counter.reserve("t1", 2)]);
    expect(reservations.filter((reservation) => reservation !== null)).toHaveLength(1);
    expect(state.asked).toBe(1);
    reservations[0]?.created();
    expect(await counter.reserve("t1", 2)).toBeNull();
    counter.ended("t1");
    expect(await counter.reserve("t1", 2)).not.toBeNull();
  });
});
