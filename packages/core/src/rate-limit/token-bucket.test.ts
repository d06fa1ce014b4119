import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import { manualClock } from "../testing/clock.ts";
import { createTokenBucketRateLimiter } from "./token-bucket.ts";

const thrown = (action: () => void): PromptrunError => {
  try {
    action();
  } catch (error) {
    if (PromptrunError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a PromptrunError");
};

describe("token bucket rate limiter", () => {
  test("allows the burst, then refuses with a whole-second Retry-After, then refills", () => {
    const clock = manualClock();
    const limiter = createTokenBucketRateLimiter({ rateLimit: { perSecond: 2, burst: 3 }, clock });
    for (let index = 0; index < 3; index++) limiter.take("a", "runs.create");
    const error = thrown(() => limiter.take("a", "runs.create"));
    expect(error.code).toBe("rate_limited");
    expect(error.retryAfterSeconds).toBe(1);
    expect(limiter.state("a", "runs.create")).toEqual({ limit: 3, remaining: 0, resetSeconds: 2 });
    clock.advance(499);
    expect(() => limiter.take("a", "runs.create")).toThrow(PromptrunError);
    clock.advance(1);
    limiter.take("a", "runs.create");
    clock.advance(10_000);
    expect(limiter.state("a", "runs.create")).toEqual({ limit: 3, remaining: 3, resetSeconds: 0 });
  });

  test("slow refill rates round Retry-After up", () => {
    const clock = manualClock();
    const limiter = createTokenBucketRateLimiter({ rateLimit: { perSecond: 0.1, burst: 1 }, clock });
    limiter.take("a", "runs.create");
    expect(thrown(() => limiter.take("a", "runs.create")).retryAfterSeconds).toBe(10);
    clock.advance(2_500);
    expect(thrown(() => limiter.take("a", "runs.create")).retryAfterSeconds).toBe(8);
  });

  test("tenants and actions have separate buckets", () => {
    const clock = manualClock();
    const limiter = createTokenBucketRateLimiter({ rateLimit: { perSecond: 1, burst: 1 }, clock });
    limiter.take("a", "runs.create");
    limiter.take("b", "runs.create");
    limiter.take("a", "stream-token");
    expect(() => limiter.take("a", "runs.create")).toThrow("rate limit exceeded for runs.create");
  });

  test("memory stays bounded: idle buckets are dropped, and the cap evicts the least recently used", () => {
    const clock = manualClock();
    const limiter = createTokenBucketRateLimiter({
      rateLimit: { perSecond: 1, burst: 1 },
      clock,
      maxBuckets: 10,
    });
    for (let index = 0; index < 50; index++) limiter.take(`t${index}`, "runs.create");
    // Only the 10 most recent tenants are remembered: t49 is still empty, t0 was forgotten.
    expect(limiter.state("t49", "runs.create").remaining).toBe(0);
    expect(limiter.state("t0", "runs.create").remaining).toBe(1);
    clock.advance(5_000);
    limiter.take("fresh", "runs.create");
    expect(limiter.state("t49", "runs.create").remaining).toBe(1);
  });
});
