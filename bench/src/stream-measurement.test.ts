import { expect, test } from "bun:test";
import { wallClockMs } from "./clock.ts";
import { LatencyHistogram } from "./latency-histogram.ts";
import { stampToken } from "./stamped-tokens.ts";
import { runStreamBatch, StreamStopwatch } from "./stream-measurement.ts";

test("a stopwatch orders its marks and measures stamped tokens", async () => {
  const perToken = new LatencyHistogram();
  const stopwatch = new StreamStopwatch(perToken);
  stopwatch.start();
  await Bun.sleep(2);
  stopwatch.accepted();
  stopwatch.runStarted();
  await Bun.sleep(2);
  stopwatch.token(stampToken(wallClockMs() - 3));
  stopwatch.token("not stamped");
  const timing = stopwatch.result();
  expect(timing.tokens).toBe(2);
  expect(timing.acceptedMs).toBeGreaterThan(1);
  expect(timing.runStartedMs!).toBeGreaterThanOrEqual(timing.acceptedMs!);
  expect(timing.firstTokenMs).toBeGreaterThan(timing.runStartedMs!);
  expect(timing.lastTokenMs).toBeGreaterThanOrEqual(timing.firstTokenMs);
  expect(perToken.count).toBe(1);
  expect(perToken.min).toBeGreaterThanOrEqual(3);
});

test("a batch runs every stream with bounded concurrency and counts failures", async () => {
  let running = 0;
  let peak = 0;
  let calls = 0;
  const result = await runStreamBatch(3, 10, async () => {
    const call = ++calls;
    running++;
    peak = Math.max(peak, running);
    await Bun.sleep(2);
    running--;
    if (call % 5 === 0) throw new Error("boom");
    return { firstTokenMs: 1, lastTokenMs: 2, tokens: 1 };
  });
  expect(calls).toBe(10);
  expect(peak).toBe(3);
  expect(result.timings).toHaveLength(8);
  expect(result.errors).toBe(2);
  expect(result.firstError).toBe("boom");
});

test("with a start spread, the workers start at different moments within it", async () => {
  const startedAt = performance.now();
  const starts: number[] = [];
  await runStreamBatch(
    20,
    20,
    async () => {
      starts.push(performance.now() - startedAt);
      return { firstTokenMs: 1, lastTokenMs: 1, tokens: 1 };
    },
    200,
  );
  expect(starts).toHaveLength(20);
  expect(Math.max(...starts)).toBeLessThan(260);
  // 20 uniform draws over 200 ms all landing in one 20 ms slot has odds of 10^-19.
  expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThan(20);
});
