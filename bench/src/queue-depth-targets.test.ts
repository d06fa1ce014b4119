import { expect, test } from "bun:test";
import { bytesPerPendingRun, flatMemoryTargets, rssMegabytes } from "./queue-depth-targets.ts";

const empty = {
  depth: 1_000,
  rssKb: 150_000,
  restartSeconds: 0.3,
  createPerSecond: 10_000,
  createP99Ms: 5,
  dequeueCpuMs: 0.1,
};

test("bytes per pending run: the RSS growth (KiB) over the added runs", () => {
  // 1,024,000 KiB more for 999,000 more runs: 1,049.6 bytes each.
  expect(bytesPerPendingRun(empty, { depth: 1_000_000, rssKb: 1_174_000 })).toBeCloseTo(1_049.6, 1);
  expect(bytesPerPendingRun(empty, { depth: 1_000_000, rssKb: 150_000 })).toBe(0);
});

test("RSS in MB of 10^6 bytes", () => {
  expect(rssMegabytes(390_625)).toBe(400);
});

test("a deep queue within every limit meets target 5", () => {
  const deep = {
    depth: 1_000_000,
    // 97,500 KiB more: 99.9 bytes per added run; 253.4 MB in all.
    rssKb: 247_500,
    restartSeconds: 14.9,
    createPerSecond: 9_000,
    createP99Ms: 5.5,
    dequeueCpuMs: 0.11,
  };
  const checks = flatMemoryTargets(empty, deep);
  expect(checks.map((check) => check.met)).toEqual([true, true, true, true, true]);
  expect(checks[0]!.measured).toBe("100 bytes");
});

test("today's engine (every pending run in memory) misses the memory and restart parts", () => {
  const deep = {
    depth: 1_000_000,
    rssKb: 2_800_000,
    restartSeconds: 40,
    createPerSecond: 11_000,
    createP99Ms: 4,
    dequeueCpuMs: 0.09,
  };
  const checks = flatMemoryTargets(empty, deep);
  // Faster creates and a cheaper dequeue at depth are within the target.
  expect(checks.map((check) => check.met)).toEqual([false, false, false, true, true]);
  expect(checks[1]!.measured).toBe("2,867 MB");
});

test("a slower create-run or dequeue at depth by more than 10 % misses", () => {
  const slower = { ...empty, depth: 1_000_000, createPerSecond: 8_900, dequeueCpuMs: 0.111 };
  const checks = flatMemoryTargets(empty, slower);
  expect(checks[3]!.met).toBe(false);
  expect(checks[4]!.met).toBe(false);
  expect(flatMemoryTargets(empty, { ...slower, createPerSecond: 10_000, createP99Ms: 5.6 })[3]!.met).toBe(
    false,
  );
});
