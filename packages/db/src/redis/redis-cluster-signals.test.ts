import { afterEach, describe, expect, test } from "bun:test";
import { createRedisClient, type RedisClient } from "./redis-client.ts";
import { createRedisClusterSignals, type RedisClusterSignals } from "./redis-cluster-signals.ts";
import { checkRedis, eventually, TEST_REDIS_URL, testKeyPrefix } from "./test-redis.ts";

const available = await checkRedis();

describe.skipIf(!available)("Redis cluster signals", () => {
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  const instances = async (count: number) => {
    const { prefix } = testKeyPrefix();
    const result: RedisClusterSignals[] = [];
    for (let index = 0; index < count; index++) {
      const publisher: RedisClient = createRedisClient(TEST_REDIS_URL);
      closers.push(() => publisher.disconnect());
      const signals = await createRedisClusterSignals({ url: TEST_REDIS_URL, keyPrefix: prefix, publisher });
      closers.push(() => signals.close());
      result.push(signals);
    }
    return result;
  };

  test("every instance hears work and cancel announcements; bursts of work are merged", async () => {
    const [a, b] = await instances(2);
    const heardByB = { work: 0, cancels: [] as string[] };
    b!.listen({
      onWork: () => heardByB.work++,
      onCancel: (runId) => heardByB.cancels.push(runId),
    });
    let heardByA = 0;
    a!.listen({ onWork: () => heardByA++, onCancel: () => {} });
    for (let index = 0; index < 50; index++) a!.announceWork();
    a!.announceCancel("run-1");
    await eventually(() => heardByB.cancels.length === 1 && heardByB.work >= 1 && heardByA >= 1);
    expect(heardByB.cancels).toEqual(["run-1"]);
    // 50 announcements within a few ms: one right away, one for the rest.
    await Bun.sleep(100);
    expect(heardByB.work).toBeLessThanOrEqual(2);
  });

  test("listen returns an unsubscribe", async () => {
    const [a, b] = await instances(2);
    let heard = 0;
    const stop = b!.listen({ onWork: () => heard++, onCancel: () => {} });
    stop();
    let control = 0;
    b!.listen({ onWork: () => control++, onCancel: () => {} });
    a!.announceWork();
    await eventually(() => control === 1);
    expect(heard).toBe(0);
  });
});
