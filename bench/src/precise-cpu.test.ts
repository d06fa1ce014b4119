import { expect, test } from "bun:test";
import { preciseCpuReader, threadCpuTotal } from "./precise-cpu.ts";

test("a thread that ends keeps what it ran in the total", () => {
  const total = threadCpuTotal();
  expect(
    total(
      new Map([
        ["1", 100],
        ["2", 7_000],
      ]),
    ),
  ).toBe(7_100);
  // Thread 2 ended: the total does not drop.
  expect(total(new Map([["1", 150]]))).toBe(7_150);
});

test("a reused thread id starts a new counter on top of the ended thread's", () => {
  const total = threadCpuTotal();
  expect(total(new Map([["9", 5_000]]))).toBe(5_000);
  expect(total(new Map([["9", 40]]))).toBe(5_040);
  expect(total(new Map([["9", 60]]))).toBe(5_060);
});

test("precise CPU seconds of this process grow while it computes", () => {
  const read = preciseCpuReader(process.pid);
  const before = read();
  // Spin until 20 ms of CPU are counted (on a loaded machine 30 ms of wall time may give less),
  // bounded by 5 s of wall time: a reader that never moves fails instead of hanging.
  let spin = 0;
  const deadline = performance.now() + 5_000;
  while (read() - before <= 0.02 && performance.now() < deadline) {
    for (let index = 0; index < 100_000; index++) spin++;
  }
  expect(spin).toBeGreaterThan(0);
  expect(read() - before).toBeGreaterThan(0.02);
});
