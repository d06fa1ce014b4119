import { describe, expect, test } from "bun:test";
import { planNextAttempt } from "./plan-next-attempt.ts";

const now = new Date("2030-01-01T00:00:00.000Z");
const base = { retrySchedule: [5, 300], failureStreak: 3, disableAfter: 5, now, random: () => 0 };

describe("planNextAttempt", () => {
  test("a success delivers and resets the streak", () => {
    expect(planNextAttempt({ ...base, delivered: true, attempt: 2 })).toEqual({
      status: "delivered",
      nextAttemptAt: null,
      failureStreak: 0,
      disable: false,
    });
  });

  test("a failure waits the schedule's delay for that attempt, jitter at most 10%", () => {
    const first = planNextAttempt({ ...base, delivered: false, attempt: 1 });
    expect(first).toEqual({
      status: "pending",
      nextAttemptAt: new Date(now.getTime() + 5_000),
      failureStreak: 3,
      disable: false,
    });
    const jittered = planNextAttempt({ ...base, delivered: false, attempt: 2, random: () => 0.999 });
    expect(jittered.nextAttemptAt?.getTime()).toBe(now.getTime() + Math.round(300_000 * 1.0999));
  });

  test("a failure after the schedule fails the delivery and counts one more failed delivery", () => {
    expect(planNextAttempt({ ...base, delivered: false, attempt: 3 })).toEqual({
      status: "failed",
      nextAttemptAt: null,
      failureStreak: 4,
      disable: false,
    });
  });

  test("the webhook is disabled when the streak reaches disableAfter; 0 never disables", () => {
    expect(planNextAttempt({ ...base, failureStreak: 4, delivered: false, attempt: 3 }).disable).toBe(true);
    expect(
      planNextAttempt({ ...base, failureStreak: 400, disableAfter: 0, delivered: false, attempt: 3 }).disable,
    ).toBe(false);
  });
});
