import { afterEach, describe, expect, test } from "bun:test";
import { waitFor } from "@promptrun/core/testing";
import {
  startSharedTick,
  stopSharedTick,
  TARGETS_PER_SLICE,
  type TickTarget,
  VERIFICATIONS_PER_TICK,
} from "./shared-ticker.ts";

/**
 * Periods no other test uses (tickers are shared per period across the process), long enough
 * that a loaded machine finishes a tick's few slices before the next tick starts.
 */
const SLICING_MS = 197;
const EVERY_INTERVAL_MS = 199;
const STOPPED_MS = 211;

interface Call {
  target: number;
  verify: boolean;
  /** Which event-loop turn (macrotask) ran the call: a microtask ends each turn's batch. */
  turn: number;
}

/**
 * Targets that record their calls; `onCall` runs inside onTick (to stop targets mid-tick).
 * Turns are told apart by a microtask queued at a turn's first call: it runs once that
 * macrotask (the interval callback or one setImmediate slice) returns.
 */
function recorder(intervalMs: number, count: number, onCall: (call: Call, calls: Call[]) => void) {
  const calls: Call[] = [];
  let turn = 0;
  let turnOpen = false;
  const targets: TickTarget[] = [];
  for (let index = 0; index < count; index++) {
    targets.push({
      onTick(verify) {
        if (!turnOpen) {
          turnOpen = true;
          queueMicrotask(() => {
            turnOpen = false;
            turn++;
          });
        }
        const call = { target: index, verify, turn };
        calls.push(call);
        onCall(call, calls);
      },
    });
  }
  const stopAll = () => {
    for (const target of targets) stopSharedTick(intervalMs, target);
  };
  started.push(stopAll);
  for (const target of targets) startSharedTick(intervalMs, target);
  return { calls, targets, stopAll };
}

const started: Array<() => void> = [];
afterEach(() => {
  for (const stopAll of started.splice(0)) stopAll();
});

const countBy = <T>(items: T[], keyOf: (item: T) => number) => {
  const counts = new Map<number, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return [...counts.values()];
};

describe("shared ticker", () => {
  test(`one tick pings ${TARGETS_PER_SLICE} targets per event-loop turn at most, every target once`, async () => {
    const total = 2 * TARGETS_PER_SLICE + 100;
    let done = false;
    const { calls, stopAll } = recorder(SLICING_MS, total, (call) => {
      // The last target ends the test's ticking, so exactly one tick is recorded.
      if (call.target === total - 1) {
        stopAll();
        done = true;
      }
    });
    await waitFor(() => done, "one full tick");
    expect(calls.map((call) => call.target)).toEqual([...Array(total).keys()]);
    expect(countBy(calls, (call) => call.turn)).toEqual([TARGETS_PER_SLICE, TARGETS_PER_SLICE, 100]);
    // Costly checks are spread: at most VERIFICATIONS_PER_TICK per tick.
    const verified = calls.filter((call) => call.verify).length;
    expect(verified).toBeGreaterThan(0);
    expect(verified).toBeLessThanOrEqual(VERIFICATIONS_PER_TICK);
    // Stopped from inside the tick: nothing more comes.
    await Bun.sleep(SLICING_MS * 2);
    expect(calls).toHaveLength(total);
  });

  test("every target is pinged once per interval, ticks never interleave, verification rotates", async () => {
    const total = TARGETS_PER_SLICE + 200;
    const ticks = 3;
    let done = false;
    const { calls, stopAll } = recorder(EVERY_INTERVAL_MS, total, (call, all) => {
      if (call.target === total - 1 && all.length === total * ticks) {
        stopAll();
        done = true;
      }
    });
    await waitFor(() => done, `${ticks} full ticks`);
    const targetsInOrder = [...Array(total).keys()];
    expect(calls.map((call) => call.target)).toEqual([
      ...targetsInOrder,
      ...targetsInOrder,
      ...targetsInOrder,
    ]);
    const verifiedPerTick = [0, 1, 2].map((tick) =>
      calls
        .slice(tick * total, (tick + 1) * total)
        .filter((call) => call.verify)
        .map((call) => call.target),
    );
    for (const verified of verifiedPerTick) {
      expect(verified.length).toBeGreaterThan(0);
      expect(verified.length).toBeLessThanOrEqual(VERIFICATIONS_PER_TICK);
    }
    // Consecutive ticks verify different targets (round robin), none twice in a row.
    expect(verifiedPerTick[1]!.some((target) => verifiedPerTick[0]!.includes(target))).toBe(false);
    expect(verifiedPerTick[2]!.some((target) => verifiedPerTick[1]!.includes(target))).toBe(false);
  });

  test("targets stopped before or during a tick are skipped, in the current slice or a later one", async () => {
    const total = TARGETS_PER_SLICE + 300;
    const laterSlice = TARGETS_PER_SLICE + 150;
    const sameSlice = 10;
    const stoppedBefore = 5;
    let done = false;
    const { calls, targets, stopAll } = recorder(STOPPED_MS, total, (call) => {
      if (call.target === 0) {
        stopSharedTick(STOPPED_MS, targets[laterSlice]!);
        stopSharedTick(STOPPED_MS, targets[sameSlice]!);
      }
      if (call.target === total - 1) {
        stopAll();
        done = true;
      }
    });
    stopSharedTick(STOPPED_MS, targets[stoppedBefore]!);
    await waitFor(() => done, "one full tick");
    const ticked = calls.map((call) => call.target);
    const skipped = new Set([stoppedBefore, sameSlice, laterSlice]);
    expect(ticked).toEqual([...Array(total).keys()].filter((index) => !skipped.has(index)));
  });
});
