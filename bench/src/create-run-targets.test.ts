import { expect, test } from "bun:test";
import { cpuMicrosecondsPerRequest, durableFloorTargets, multiCoreTargets } from "./create-run-targets.ts";

const floor = { requestsPerSecond: 60_000, p99Ms: 4.5, cpuMicrosecondsPerRequest: 15 };

test("CPU per request is CPU seconds over the requests answered, in microseconds", () => {
  expect(cpuMicrosecondsPerRequest(0.9, 60_000)).toBeCloseTo(15, 9);
  expect(cpuMicrosecondsPerRequest(0.9, 0)).toBeNaN();
});

test("create-run at the floor's limits meets target 1", () => {
  const checks = durableFloorTargets(
    { requestsPerSecond: 42_000, p99Ms: 9, cpuMicrosecondsPerRequest: 22.5 },
    floor,
  );
  expect(checks.map((check) => check.met)).toEqual([true, true, true]);
  expect(checks[0]!.measured).toBe("70.0 %");
  expect(checks[2]!.measured).toBe("22.5 vs 15.0 µs (×1.50)");
});

test("create-run just past each limit misses that part of target 1", () => {
  const checks = durableFloorTargets(
    { requestsPerSecond: 41_000, p99Ms: 9.1, cpuMicrosecondsPerRequest: 47 },
    floor,
  );
  expect(checks.map((check) => check.met)).toEqual([false, false, false]);
});

test("a missing floor reading fails the targets instead of passing them", () => {
  const checks = durableFloorTargets(floor, { ...floor, requestsPerSecond: Number.NaN, p99Ms: Number.NaN });
  expect(checks[0]!.met).toBe(false);
  expect(checks[1]!.met).toBe(false);
});

test("the cores target needs 1.5 cores; one thread never meets the ×1.6 part", () => {
  expect(multiCoreTargets(1.5).map((check) => check.met)).toEqual([true, false]);
  expect(multiCoreTargets(1.06)[0]!.met).toBe(false);
  expect(multiCoreTargets(1.06)[1]!.measured).toContain("×1.00");
});
