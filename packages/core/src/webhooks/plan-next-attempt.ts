import type { WebhookDeliveryRecord } from "../ports.ts";

export interface AttemptOutcome {
  status: WebhookDeliveryRecord["status"];
  nextAttemptAt: Date | null;
  failureStreak: number;
  disable: boolean;
}

/**
 * What follows an attempt. A success delivers and resets the webhook's failure streak. A failure
 * waits `retrySchedule[attempt - 1]` seconds (plus up to 10% jitter, so retries of many
 * deliveries do not land together); when the schedule is exhausted the delivery is `failed`,
 * which counts one more consecutive failed delivery, and the webhook is disabled at
 * `disableAfter` of them (0 never disables).
 */
export function planNextAttempt(input: {
  delivered: boolean;
  attempt: number;
  retrySchedule: readonly number[];
  failureStreak: number;
  disableAfter: number;
  now: Date;
  random: () => number;
}): AttemptOutcome {
  if (input.delivered) return { status: "delivered", nextAttemptAt: null, failureStreak: 0, disable: false };
  const delaySeconds = input.retrySchedule[input.attempt - 1];
  if (delaySeconds === undefined) {
    const failureStreak = input.failureStreak + 1;
    return {
      status: "failed",
      nextAttemptAt: null,
      failureStreak,
      disable: input.disableAfter > 0 && failureStreak >= input.disableAfter,
    };
  }
  const delayMs = delaySeconds * 1000 * (1 + 0.1 * input.random());
  return {
    status: "pending",
    nextAttemptAt: new Date(input.now.getTime() + Math.round(delayMs)),
    failureStreak: input.failureStreak,
    disable: false,
  };
}
