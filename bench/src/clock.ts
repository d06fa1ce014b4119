/**
 * Wall-clock milliseconds with sub-millisecond resolution. Unlike process.hrtime (relative to
 * each process's start under Bun), it is comparable across processes on this machine, so a
 * timestamp stamped by the fake upstream can be subtracted from one taken by a subscriber.
 */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();
