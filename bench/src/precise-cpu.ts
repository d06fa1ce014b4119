import { readdirSync, readFileSync } from "node:fs";

/**
 * A running total of per-thread CPU counters that may vanish (the thread ended) or start again
 * from zero (its id was reused): each thread keeps its last reading, so the total never goes back.
 */
export function threadCpuTotal(): (nanosecondsByThread: Map<string, number>) => number {
  const lastByThread = new Map<string, number>();
  let ended = 0;
  return (nanosecondsByThread) => {
    for (const [thread, nanoseconds] of nanosecondsByThread) {
      const last = lastByThread.get(thread);
      if (last !== undefined && nanoseconds < last) ended += last;
      lastByThread.set(thread, nanoseconds);
    }
    let total = ended;
    for (const nanoseconds of lastByThread.values()) total += nanoseconds;
    return total;
  };
}

/**
 * CPU seconds a process's threads have run, from the scheduler's nanosecond counters
 * (/proc/<pid>/task/<tid>/schedstat). /proc/<pid>/stat counts in 10 ms ticks: ±20 ms over a window
 * of ~250 ms of CPU would be ±8 % on its own. A summing read of the threads alive would drop when a
 * thread ends (a GC or pool thread that ran seconds while a million runs loaded, ending in the
 * window, made the CPU per run negative): the reader remembers every thread it has seen, losing at
 * most what an ending thread ran since the previous read.
 */
export function preciseCpuReader(pid: number): () => number {
  const total = threadCpuTotal();
  return () => {
    const readings = new Map<string, number>();
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        readings.set(task, Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]));
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return total(readings) / 1e9;
  };
}
