import { expect, test } from "bun:test";
import { LatencyHistogram } from "./latency-histogram.ts";

test("percentiles are within 1 % of the exact nearest-rank value", () => {
  const histogram = new LatencyHistogram();
  for (let value = 1; value <= 1000; value++) histogram.record(value / 10);
  expect(histogram.count).toBe(1000);
  expect(histogram.percentile(50)).toBeGreaterThanOrEqual(50);
  expect(histogram.percentile(50)).toBeLessThanOrEqual(50 * 1.01);
  expect(histogram.percentile(99)).toBeGreaterThanOrEqual(99);
  expect(histogram.percentile(99)).toBeLessThanOrEqual(99 * 1.01);
  expect(histogram.percentile(100)).toBe(100);
  expect(histogram.mean()).toBeCloseTo(50.05, 5);
});

test("merging snapshots equals recording everything in one histogram", () => {
  const left = new LatencyHistogram();
  const right = new LatencyHistogram();
  const all = new LatencyHistogram();
  for (let index = 0; index < 500; index++) {
    const value = (index * 7919) % 250;
    (index % 2 ? left : right).record(value);
    all.record(value);
  }
  const merged = LatencyHistogram.from(JSON.parse(JSON.stringify(left.snapshot()))).merge(right);
  for (const p of [1, 50, 90, 99, 100]) expect(merged.percentile(p)).toBe(all.percentile(p));
  expect(merged.count).toBe(500);
  expect(merged.min).toBe(all.min);
});

test("negative samples count as zero and an empty histogram has no percentiles", () => {
  const histogram = new LatencyHistogram();
  expect(histogram.percentile(50)).toBeNaN();
  histogram.record(-0.2);
  expect(histogram.percentile(50)).toBe(0);
});
