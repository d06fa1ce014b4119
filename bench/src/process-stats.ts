import { readFileSync } from "node:fs";

let clockTicksPerSecond: number | null = null;

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on Linux unless told otherwise). */
function ticksPerSecond(): number {
  if (clockTicksPerSecond === null) {
    const output = Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim();
    clockTicksPerSecond = Number(output) > 0 ? Number(output) : 100;
  }
  return clockTicksPerSecond;
}

/** Resident set size in KiB from /proc/<pid>/status (VmRSS). */
export function readRssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** User + system CPU seconds the process has used so far (/proc/<pid>/stat fields 14 and 15). */
export function readCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may contain spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const userTicks = Number(fields[11]);
  const systemTicks = Number(fields[12]);
  return (userTicks + systemTicks) / ticksPerSecond();
}

export interface CpuWindow {
  /** Wall seconds since start(). */
  wallSeconds: number;
  /** CPU seconds per pid since start() (NaN for a pid that is gone). */
  cpuSeconds: Record<number, number>;
}

/** CPU used by some processes over a window: cores busy = cpuSeconds / wallSeconds. */
export function startCpuWindow(pids: readonly number[]): () => CpuWindow {
  const startedAt = performance.now();
  const before = new Map(pids.map((pid) => [pid, readCpuSeconds(pid)]));
  return () => {
    const cpuSeconds: Record<number, number> = {};
    for (const pid of pids) {
      try {
        cpuSeconds[pid] = readCpuSeconds(pid) - (before.get(pid) ?? 0);
      } catch {
        cpuSeconds[pid] = Number.NaN;
      }
    }
    return { wallSeconds: (performance.now() - startedAt) / 1000, cpuSeconds };
  };
}
