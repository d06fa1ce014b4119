import { rateLimited } from "../errors.ts";
import type { Clock } from "../ports.ts";
import type { RateLimitService } from "../services.ts";

type Action = Parameters<RateLimitService["take"]>[1];

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export interface TokenBucketOptions {
  /** Tokens added per second, and the bucket size. */
  rateLimit: { perSecond: number; burst: number };
  clock: Clock;
  /** Most buckets kept; beyond it, full (idle) buckets and then the least recently used go. */
  maxBuckets?: number;
}

/**
 * Per tenant, per action token buckets in memory (one instance; a shared store replaces this for
 * several). A bucket that has refilled completely holds no information, so it is dropped: memory
 * follows the tenants active within the last `burst / perSecond` seconds.
 */
export function createTokenBucketRateLimiter(options: TokenBucketOptions): RateLimitService {
  const { clock } = options;
  const perSecond = Math.max(options.rateLimit.perSecond, Number.EPSILON);
  const burst = Math.max(1, options.rateLimit.burst);
  const maxBuckets = options.maxBuckets ?? 100_000;
  /** Map order is least recently used first: a used bucket is re-inserted at the end. */
  const buckets = new Map<string, Bucket>();
  let operationsSinceSweep = 0;

  const refilled = (bucket: Bucket | undefined, now: number): number =>
    bucket === undefined
      ? burst
      : Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.updatedAt) / 1000) * perSecond);

  const sweep = (now: number) => {
    for (const [key, bucket] of buckets) if (refilled(bucket, now) >= burst) buckets.delete(key);
    for (const key of buckets.keys()) {
      if (buckets.size <= maxBuckets) break;
      buckets.delete(key);
    }
  };

  const keyOf = (tenantId: string, action: Action) => `${action}\u0000${tenantId}`;

  return {
    take(tenantId, action) {
      const now = clock.now().getTime();
      if (++operationsSinceSweep >= 1_000 || buckets.size > maxBuckets) {
        operationsSinceSweep = 0;
        sweep(now);
      }
      const key = keyOf(tenantId, action);
      const tokens = refilled(buckets.get(key), now);
      if (tokens < 1) {
        const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / perSecond));
        throw rateLimited(
          `rate limit exceeded for ${action}; retry in ${retryAfterSeconds} s`,
          retryAfterSeconds,
        );
      }
      buckets.delete(key);
      buckets.set(key, { tokens: tokens - 1, updatedAt: now });
    },
    state(tenantId, action) {
      const tokens = refilled(buckets.get(keyOf(tenantId, action)), clock.now().getTime());
      return {
        limit: burst,
        remaining: Math.floor(tokens),
        resetSeconds: Math.ceil((burst - tokens) / perSecond),
      };
    },
  };
}
