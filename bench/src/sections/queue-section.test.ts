import { expect, test } from "bun:test";
import { cpuMsPerRunBetween, median, rateBetween } from "./queue-section.ts";

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

test("CPU per run over a window of completions interpolates CPU between the polls around it", () => {
  // 2 ms of CPU per run for the first 100 runs (start-up), then 0.5 ms per run.
  const samples = [
    { at: 0, completed: 0, cpuSeconds: 1 },
    { at: 100, completed: 100, cpuSeconds: 1.2 },
    { at: 600, completed: 1_100, cpuSeconds: 1.7 },
  ];
  expect(cpuMsPerRunBetween(samples, 100, 900)).toBeCloseTo(0.5, 6);
  expect(cpuMsPerRunBetween(samples, 0, 100)).toBeCloseTo(2, 6);
});

test("a drain that stopped before the window's end has no CPU per run", () => {
  const samples = [
    { at: 0, completed: 0, cpuSeconds: 1 },
    { at: 100, completed: 500, cpuSeconds: 1.25 },
  ];
  expect(cpuMsPerRunBetween(samples, 100, 900)).toBeNaN();
});

test("the median ignores readings that did not happen", () => {
  expect(median([0.5, 0.3, 0.4])).toBe(0.4);
  expect(median([0.5, Number.NaN, 0.3])).toBeCloseTo(0.4, 9);
  expect(median([])).toBeNaN();
});
