import { expect, test } from "bun:test";
import { splitStreamCpu } from "./stream-cpu-cost.ts";

test("the long and short batches split into per-token and per-stream cost", () => {
  // 0.5 ms per stream + 20 µs per token.
  const split = splitStreamCpu({ tokens: 200, msPerStream: 4.5 }, { tokens: 2, msPerStream: 0.54 });
  expect(split.perTokenUs).toBeCloseTo(20, 6);
  expect(split.perStreamMs).toBeCloseTo(0.5, 6);
});

test("a reading where the long streams cost no more per stream gives no per-token cost", () => {
  const split = splitStreamCpu({ tokens: 200, msPerStream: 1 }, { tokens: 2, msPerStream: 1 });
  expect(split.perTokenUs).toBe(0);
  expect(split.perStreamMs).toBe(1);
});
