import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { ApiKeyRecord, Store } from "@promptrun/core";
import { addTenant, at, push } from "@promptrun/core/testing";
import { openPostgresStore } from "./open.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

const available = await checkPostgres();

/** Polls until `check` holds; the announcement travels through Postgres asynchronously. */
const eventually = async (check: () => Promise<boolean>, timeoutMs = 3_000): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(10);
  }
  return check();
};

describe.skipIf(!available)("Postgres read caches across instances", () => {
  let database: TestDatabase;
  const opened: Store[] = [];
  // A TTL far longer than the waits below: what clears the other instance is the NOTIFY.
  const open = async () => {
    const store = await openPostgresStore({ url: database.url, maxConnections: 2, cacheTtlMs: 5_000 });
    opened.push(store);
    return store;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await database.truncate();
  });
  afterAll(() => database?.drop());

  test("a key revoked or a subscription switched on one instance stops working on the other", async () => {
    const [a, b] = [await open(), await open()];
    const acme = await addTenant(a);
    const key: ApiKeyRecord = {
      id: Bun.randomUUIDv7(),
      tenantId: acme.id,
      prefix: "pr_live_feed",
      hash: "f".repeat(64),
      createdAt: at(0),
      revokedAt: null,
      lastUsedAt: null,
    };
    await a.tenants.createApiKey(key);
    // Cached on b, then a switch and a revocation through a.
    expect((await b.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive).toBe(true);
    await a.tenants.setSubscription(acme.id, false);
    expect(
      await eventually(
        async () => (await b.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive === false,
      ),
    ).toBe(true);
    await a.tenants.revokeApiKeys({ id: key.id }, at(1));
    expect(await eventually(async () => (await b.tenants.findApiKeyByHash(key.hash)) === null, 1_000)).toBe(
      true,
    );
  });

  test("a push or a tag move on one instance moves latest and the tag on the other", async () => {
    const [a, b] = [await open(), await open()];
    const acme = await addTenant(a);
    const first = (await push(a, acme.id, "greet", "one", ["prod"])).version;
    const latestOnB = async () => (await b.prompts.resolveVersion(acme.id, "greet", { kind: "latest" }))?.id;
    const prodOnB = async () =>
      (await b.prompts.resolveVersion(acme.id, "greet", { kind: "tag", tag: "prod" }))?.id;
    expect(await latestOnB()).toBe(first.id);
    expect(await prodOnB()).toBe(first.id);
    const second = (await push(a, acme.id, "greet", "two", [], 1)).version;
    expect(await eventually(async () => (await latestOnB()) === second.id, 1_000)).toBe(true);
    await a.prompts.setTag(acme.id, "greet", { kind: "number", version: 2 }, "prod", at(2));
    expect(await eventually(async () => (await prodOnB()) === second.id, 1_000)).toBe(true);
    // The same instance sees its own writes at once.
    await b.prompts.setTag(acme.id, "greet", { kind: "number", version: 1 }, "prod", at(3));
    expect(await prodOnB()).toBe(first.id);
  });

  test("cached records cannot be changed through what a caller got", async () => {
    const store = await open();
    const acme = await addTenant(store);
    await push(store, acme.id, "greet", "one");
    const version = await store.prompts.resolveVersion(acme.id, "greet", { kind: "number", version: 1 });
    expect(Object.isFrozen(version?.definition)).toBe(true);
  });
});
