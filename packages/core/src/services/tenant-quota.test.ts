import { describe, expect, test } from "bun:test";
import { rejection } from "../testing/rejection.ts";
import { createQuotaGuard } from "./tenant-quota.ts";

describe("createQuotaGuard", () => {
  test("concurrent check-then-create for one tenant cannot both take the last slot", async () => {
    const guard = createQuotaGuard("webhooks", 3);
    const stored: string[] = [];
    // Each create reads the count, then waits (a store round trip) before writing.
    const create = (id: string) =>
      guard.exclusive("tenant-a", async () => {
        const used = stored.length;
        await Bun.sleep(5);
        guard.assertRoom(used);
        stored.push(id);
      });
    const outcomes = await Promise.allSettled(["1", "2", "3", "4", "5", "6"].map(create));
    expect(stored).toEqual(["1", "2", "3"]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
      "rejected",
    ]);
  });

  test("tenants do not wait for each other, and a failed action releases the queue", async () => {
    const guard = createQuotaGuard("apiKeys", 1);
    let releaseA = () => {};
    const slowA = guard.exclusive("tenant-a", () => new Promise<void>((resolve) => (releaseA = resolve)));
    expect(await guard.exclusive("tenant-b", async () => "b ran")).toBe("b ran");
    releaseA();
    await slowA;
    await rejection(guard.exclusive("tenant-a", async () => guard.assertRoom(1)));
    expect(await guard.exclusive("tenant-a", async () => "after a failure")).toBe("after a failure");
  });

  test("the error is a conflict naming the quota, the count and the setting", async () => {
    const guard = createQuotaGuard("promptVersions", 10);
    const error = await rejection(Promise.resolve().then(() => guard.assertRoom(9, 3)));
    expect(error.code).toBe("conflict");
    expect(error.message).toBe(
      "quota exceeded: a tenant may have at most 10 prompt versions (has 9, this would add 3); versions are never deleted, or the operator can raise PROMPTRUN_MAX_PROMPT_VERSIONS",
    );
    expect(() => guard.assertRoom(9, 1)).not.toThrow();
  });
});
