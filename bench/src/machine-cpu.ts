import { readFileSync } from "node:fs";

/** Busy CPU seconds of the whole machine so far (/proc/stat: everything but idle and iowait), at USER_HZ 100. */
function readMachineBusySeconds(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / 100;
}

/**
 * Cores busy on the whole machine over a window: with Postgres and Redis outside our process
 * tree, this is what shows whether the machine, not Promptrun, was the limit.
 */
export function startMachineCpuWindow(): () => number {
  const startedAt = performance.now();
  const before = readMachineBusySeconds();
  return () => (readMachineBusySeconds() - before) / ((performance.now() - startedAt) / 1000);
}
