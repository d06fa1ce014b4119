import { afterEach, describe, expect, test } from "bun:test";
import { createSignInFailures, type SignInFailures } from "@promptrun/core";
import { rejection } from "@promptrun/core/testing";
import { createRedisClient, type RedisClient } from "./redis-client.ts";
import { createRedisSignInFailures } from "./redis-sign-in-failures.ts";
import { checkRedis, TEST_REDIS_URL, testKeyPrefix } from "./test-redis.ts";

const available = await checkRedis();
const clock = { now: () => new Date() };

describe.skipIf(!available)("failed sign-ins counted in Redis", () => {
  const clients: RedisClient[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const client = (url = TEST_REDIS_URL) => {
    const created = createRedisClient(url);
    clients.push(created);
    return created;
  };

  /** The counters of several "instances" (each its own connection) on one key prefix. */
  const instances = (count: number, rules = { limit: 10, windowMs: 60_000 }) => {
    const keys = testKeyPrefix();
    cleanups.push(keys.cleanup);
    return {
      prefix: keys.prefix,
      counters: Array.from({ length: count }, () =>
        createRedisSignInFailures({
          client: client(),
          keyPrefix: keys.prefix,
          ...rules,
          fallback: createSignInFailures({ clock, ...rules }),
        }),
      ),
    };
  };

  test("instances count one address together: the 11th attempt is refused on every instance", async () => {
    const { counters } = instances(3);
    const [a, b, c] = counters as [SignInFailures, SignInFailures, SignInFailures];
    // Ten wrong keys spread over three instances, some in the same instant.
    await Promise.all(Array.from({ length: 10 }, (_, index) => counters[index % 3]!.record("203.0.113.7")));
    for (const instance of [a, b, c]) {
      const error = await rejection(instance.check("203.0.113.7"));
      expect(error.code).toBe("rate_limited");
      // The oldest counted failure leaves the one-minute window in about a minute.
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(59);
      expect(error.retryAfterSeconds).toBeLessThanOrEqual(60);
      expect(error.message).toContain("too many failed sign-ins");
    }
    // Another address has its own count.
    await a.check("203.0.113.8");
  });

  test("nine failures are let through; only the newest `limit` are kept, and the key expires with the window", async () => {
    const { prefix, counters } = instances(2, { limit: 10, windowMs: 60_000 });
    const [a, b] = counters as [SignInFailures, SignInFailures];
    for (let index = 0; index < 9; index++) await a.record("198.51.100.1");
    await b.check("198.51.100.1");
    for (let index = 0; index < 6; index++) await b.record("198.51.100.1");
    const redis = client();
    const key = `${prefix}:sign-in-failures:198.51.100.1`;
    expect(await redis.zcard(key)).toBe(10);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  test("the window slides: once the oldest failures are older than the window, sign-ins are let through again", async () => {
    const { counters } = instances(2, { limit: 2, windowMs: 600 });
    const [a, b] = counters as [SignInFailures, SignInFailures];
    await a.record("192.0.2.1");
    await b.record("192.0.2.1");
    expect((await rejection(a.check("192.0.2.1"))).retryAfterSeconds).toBe(1);
    await Bun.sleep(700);
    await a.check("192.0.2.1");
    await b.check("192.0.2.1");
  });

  test("Redis not answering: each instance counts on its own (never unchecked) and says so", async () => {
    const keys = testKeyPrefix();
    cleanups.push(keys.cleanup);
    const errors: string[] = [];
    const rules = { limit: 2, windowMs: 60_000 };
    // Nothing listens on port 1: every command fails or times out.
    const counter = createRedisSignInFailures({
      client: client("redis://127.0.0.1:1"),
      keyPrefix: keys.prefix,
      ...rules,
      fallback: createSignInFailures({ clock, ...rules }),
      onError: (message) => errors.push(message),
      timeoutMs: 200,
    });
    await counter.check("192.0.2.9");
    await counter.record("192.0.2.9");
    await counter.record("192.0.2.9");
    expect((await rejection(counter.check("192.0.2.9"))).code).toBe("rate_limited");
    expect(errors).toContain("sign-in failure not shared; this instance counts it");
    expect(errors).toContain("sign-in failure check failed; this instance's own count answers");
  });
});
