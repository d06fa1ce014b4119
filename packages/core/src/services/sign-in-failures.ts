import { rateLimited } from "../errors.ts";
import type { Clock } from "../ports.ts";

/**
 * Failed console sign-ins per client address (docs/SECURITY.md "Limits"): in this process's
 * memory here; shared by every instance when they share a Redis (`@promptrun/db`).
 */
export interface SignInFailures {
  /** Rejects with rate_limited, with the seconds until the oldest counted failure leaves the window, once `limit` are counted. */
  check(address: string): Promise<void>;
  record(address: string): Promise<void>;
}

export interface SignInFailureOptions {
  clock: Clock;
  /** Failures allowed within the window; the next attempt is refused. */
  limit: number;
  windowMs: number;
  /** Addresses remembered at once; past it, those with nothing in the window go, then the oldest. */
  maxAddresses?: number;
}

/** The refusal once an address has `limit` failures in the window. */
export const tooManySignInFailures = (retryAfterSeconds: number) =>
  rateLimited(
    `too many failed sign-ins from this address: try again in ${retryAfterSeconds} s`,
    retryAfterSeconds,
  );

/** A sliding window per address: the times of its last `limit` failures, oldest first. */
export function createSignInFailures(options: SignInFailureOptions): SignInFailures {
  const { clock, limit, windowMs } = options;
  const maxAddresses = options.maxAddresses ?? 10_000;
  const failures = new Map<string, number[]>();

  const recent = (address: string, now: number): number[] => {
    const times = (failures.get(address) ?? []).filter((time) => time > now - windowMs);
    if (times.length === 0) failures.delete(address);
    else failures.set(address, times);
    return times;
  };

  const sweep = (now: number) => {
    for (const address of failures.keys()) recent(address, now);
    for (const address of failures.keys()) {
      if (failures.size <= maxAddresses) break;
      failures.delete(address);
    }
  };

  return {
    async check(address) {
      const now = clock.now().getTime();
      const times = recent(address, now);
      if (times.length < limit) return;
      throw tooManySignInFailures(Math.max(1, Math.ceil((times[0]! + windowMs - now) / 1000)));
    },
    async record(address) {
      const now = clock.now().getTime();
      const times = [...recent(address, now), now].slice(-limit);
      // Re-inserted at the end: Map order is least recently failed first.
      failures.delete(address);
      failures.set(address, times);
      if (failures.size > maxAddresses) sweep(now);
    },
  };
}
