import type { Clock } from "../ports.ts";

export interface ManualClock extends Clock {
  /** Moves time forward by `milliseconds`. */
  advance(milliseconds: number): void;
  set(at: Date): void;
}

/** A Clock that stands still until told to move: time-dependent tests without sleeping. */
export function manualClock(start: Date = new Date("2030-01-01T00:00:00.000Z")): ManualClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance(milliseconds) {
      current += milliseconds;
    },
    set(at) {
      current = at.getTime();
    },
  };
}
