import { expect, test } from "bun:test";
import { capacityOf, formatCapacity, type LevelReading, searchCapacity } from "./stream-capacity.ts";

const LEVELS = [100, 200, 400, 800];

/** A fake measurement: the baseline's p99 is 1 ms; each relay's grows with the streams. */
const fakeMeasure =
  (perStream: Record<string, number>, calls: string[]) =>
  async (relay: string | null, streams: number): Promise<LevelReading> => {
    calls.push(`${relay ?? "direct"}@${streams}`);
    return { perTokenP99Ms: 1 + (relay ? perStream[relay]! * streams : 0), errors: 0, cores: {} };
  };

test("each relay steps up until its first level over the limit; the baseline runs while one is left", async () => {
  const calls: string[] = [];
  const search = await searchCapacity<"fast" | "slow">({
    levels: LEVELS,
    relays: ["fast", "slow"],
    limitMs: 20,
    // fast: +2 ms at 100 … +16 ms at 800; slow: +10 ms at 100, +20 ms at 200 (not under 20).
    measure: fakeMeasure({ fast: 0.02, slow: 0.1 }, calls),
  });
  expect(calls).toEqual([
    "direct@100",
    "fast@100",
    "slow@100",
    "direct@200",
    "fast@200",
    "slow@200",
    "direct@400",
    "fast@400",
    "direct@800",
    "fast@800",
  ]);
  expect(search.steps.slow.map((step) => step.addedP99Ms)).toEqual([10, 20]);
  expect(capacityOf(search.steps.slow, LEVELS)).toEqual({ streams: 100, atCap: false });
  expect(capacityOf(search.steps.fast, LEVELS)).toEqual({ streams: 800, atCap: true });
});

test("failed streams end a relay's search even under the latency limit", async () => {
  const search = await searchCapacity<"flaky">({
    levels: LEVELS,
    relays: ["flaky"],
    limitMs: 20,
    measure: async (relay, streams) => ({
      perTokenP99Ms: 1,
      errors: relay && streams === 200 ? 3 : 0,
      cores: {},
    }),
  });
  expect(search.steps.flaky.map((step) => step.streams)).toEqual([100, 200]);
  expect(capacityOf(search.steps.flaky, LEVELS).streams).toBe(100);
});

test("the capacity reads as a count, a cap or below the first level", () => {
  expect(formatCapacity({ streams: 400, atCap: false }, LEVELS)).toBe("400");
  expect(formatCapacity({ streams: 800, atCap: true }, LEVELS)).toBe("≥ 800 (the cap)");
  expect(formatCapacity({ streams: null, atCap: false }, LEVELS)).toBe("< 100 (the first level)");
  expect(
    capacityOf(
      [
        {
          streams: 100,
          addedP99Ms: 25,
          reading: { perTokenP99Ms: 26, errors: 0, cores: {} },
          withinLimit: false,
        },
      ],
      LEVELS,
    ),
  ).toEqual({
    streams: null,
    atCap: false,
  });
});
