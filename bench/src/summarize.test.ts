import { expect, test } from "bun:test";
import { summarize } from "./summarize.ts";

test("nearest-rank percentiles of an unsorted sample", () => {
  const summary = summarize([5, 1, 4, 2, 3, 10, 9, 8, 7, 6]);
  expect(summary).toEqual({ count: 10, p50: 5, p99: 10, mean: 5.5, max: 10 });
});

test("an empty sample gives NaN, not zero", () => {
  expect(summarize([]).p50).toBeNaN();
});
