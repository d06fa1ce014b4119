import { afterEach, describe, expect, test } from "bun:test";
import { rejection } from "@promptrun/core/testing";
import { createRedisClient, type RedisClient } from "./redis-client.ts";
import { createRedisRateLimiter } from "./redis-rate-limiter.ts";
import { checkRedis, TEST_REDIS_URL, testKeyPrefix } from "./test-redis.ts";

const available = await checkRedis();
const clock = { now: () => new Date() };

describe.skipIf(!available)("Redis rate limiter", () => {
  const clients: RedisClient[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** Limiters of several "instances" (each its own connection) on one key prefix. */
  const limiters = (count: number, rateLimit = { perSecond: 0.5, burst: 5 }) => {
    const keys = testKeyPrefix();
    cleanups.push(keys.cleanup);
    return Array.from({ length: count }, () => {
      const client = createRedisClient(TEST_REDIS_URL);
      clients.push(client);
      return createRedisRateLimiter({ client, keyPrefix: keys.prefix, rateLimit, clock });
    });
  };

  test("instances draw from one bucket per tenant and action", async () => {
    const [a, b, c] = limiters(3);
    // Five tokens in all, taken concurrently through three instances.
    const results = await Promise.allSettled(
      Array.from({ length: 9 }, (_, index) => [a, b, c][index % 3]!.take("tenant-1", "runs.create")),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(5);
    const error = await rejection(b!.take("tenant-1", "runs.create"));
    expect(error.code).toBe("rate_limited");
    // 0.5 tokens per second: the next token is about 2 s away.
    expect(error.retryAfterSeconds).toBe(2);
    // Other tenants and other actions have their own buckets.
    await a!.take("tenant-2", "runs.create");
    await c!.take("tenant-1", "stream-token");
    // The headers' view: what this instance last saw.
    expect(b!.state("tenant-1", "runs.create")).toMatchObject({ limit: 5, remaining: 0 });
    expect(b!.state("tenant-9", "runs.create")).toEqual({ limit: 5, remaining: 5, resetSeconds: 0 });
  });

  test("the bucket refills at the configured rate", async () => {
    const [a, b] = limiters(2, { perSecond: 20, burst: 2 });
    await a!.take("tenant", "runs.create");
    await b!.take("tenant", "runs.create");
    expect((await rejection(a!.take("tenant", "runs.create"))).code).toBe("rate_limited");
    // 20 per second: one token back within 50 ms (waiting 200 ms leaves room on a slow machine).
    await Bun.sleep(200);
    await b!.take("tenant", "runs.create");
  });

  test("an unreachable Redis lets requests through and reports it", async () => {
    const errors: string[] = [];
    const client = createRedisClient("redis://127.0.0.1:1");
    clients.push(client);
    const limiter = createRedisRateLimiter({
      client,
      keyPrefix: "unused",
      rateLimit: { perSecond: 1, burst: 1 },
      clock,
      onError: (message) => errors.push(message),
      timeoutMs: 100,
    });
    await limiter.take("tenant", "runs.create");
    await limiter.take("tenant", "runs.create");
    expect(errors).toEqual([
      "rate limit check failed; the request is let through",
      "rate limit check failed; the request is let through",
    ]);
  });
});
