/**
 * Test helpers for the Redis adapters: a real Redis server (`PROMPTRUN_TEST_REDIS_URL`, default
 * redis://127.0.0.1:6379), a fresh key prefix per test so runs never see each other's keys.
 */
import Redis from "ioredis";
import { redactUrl } from "../redact-url.ts";

export const TEST_REDIS_URL = process.env.PROMPTRUN_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Whether Redis answers within a second; when not, says so on one line (a skip is never silent). */
export const checkRedis = async (url = TEST_REDIS_URL): Promise<boolean> => {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => {});
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      Bun.sleep(1_000).then(() => {
        throw new Error("timeout");
      }),
    ]);
    return true;
  } catch {
    console.warn(`redis not reachable at ${redactUrl(url)}: skipping Redis tests`);
    return false;
  } finally {
    client.disconnect();
  }
};

/** A key prefix no other test uses; `cleanup` deletes its keys. */
export const testKeyPrefix = () => {
  const prefix = `promptrun-test:${crypto.randomUUID()}`;
  return {
    prefix,
    async cleanup() {
      const client = new Redis(TEST_REDIS_URL);
      try {
        const keys = await client.keys(`${prefix}:*`);
        if (keys.length > 0) await client.del(...keys);
      } finally {
        client.disconnect();
      }
    },
  };
};

/** Polls until `check` holds (generous deadline: a loaded machine is slow, not wrong). */
export const eventually = async (check: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(5);
  }
};
