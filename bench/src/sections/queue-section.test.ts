import { expect, test } from "bun:test";
import { rateBetween } from "./queue-section.ts";

test("rate between two fractions interpolates inside the polling samples", () => {
  // 100 completions per second, sampled every 100 ms.
  const samples = Array.from({ length: 11 }, (_, index) => ({ at: index * 100, completed: index * 10 }));
  expect(rateBetween(samples, 100, 0.1, 0.9)).toBeCloseTo(100, 6);
  expect(rateBetween(samples, 100, 0.15, 0.55)).toBeCloseTo(100, 6);
});

test("a slowdown late in the drain shows in the late rate", () => {
  const samples = [
    { at: 0, completed: 0 },
    { at: 1000, completed: 500 },
    { at: 3000, completed: 1000 },
  ];
  expect(rateBetween(samples, 1000, 0.1, 0.3)).toBeCloseTo(500, 6);
  expect(rateBetween(samples, 1000, 0.7, 0.9)).toBeCloseTo(250, 6);
});
