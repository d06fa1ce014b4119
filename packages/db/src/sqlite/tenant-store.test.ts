import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { ApiKeyRecord, TenantRecord } from "@promptrun/core";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { addTenant, openTempStore } from "./test-fixtures.ts";

class ManualClock {
  constructor(public current: Date) {}
  now = () => this.current;
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

const apiKey = (tenantId: string, prefix: string, hash: string): ApiKeyRecord => ({
  id: Bun.randomUUIDv7(),
  tenantId,
  prefix,
  hash,
  createdAt: new Date(1_700_000_000_000),
  revokedAt: null,
  lastUsedAt: null,
});

describe("SQLite TenantStore", () => {
  let store: SqliteStore;
  let dispose: () => Promise<void>;
  const clock = new ManualClock(new Date(1_800_000_000_000));

  beforeEach(async () => {
    ({ store, dispose } = await openTempStore({ clock }));
  });
  afterEach(() => dispose());

  test("creates, reads and lists tenants", async () => {
    const acme = await addTenant(store, "acme");
    const other = await addTenant(store, "other");
    expect(await store.tenants.get(acme.id)).toEqual(acme);
    expect(await store.tenants.get(Bun.randomUUIDv7())).toBeNull();
    expect((await store.tenants.list()).map((tenant) => tenant.name).sort()).toEqual(["acme", "other"]);
    expect(other.subscriptionActive).toBe(true);
  });

  test("a duplicate tenant id is a conflict", async () => {
    const acme = await addTenant(store);
    await expect(
      store.tenants.create({ ...acme, name: "again" } satisfies TenantRecord),
    ).rejects.toMatchObject({
      code: "conflict",
    });
  });

  test("setSubscription flips the flag and reports unknown tenants", async () => {
    const acme = await addTenant(store);
    expect(await store.tenants.setSubscription(acme.id, false)).toBe(true);
    expect((await store.tenants.get(acme.id))?.subscriptionActive).toBe(false);
    expect(await store.tenants.setSubscription(acme.id, true)).toBe(true);
    expect((await store.tenants.get(acme.id))?.subscriptionActive).toBe(true);
    expect(await store.tenants.setSubscription(Bun.randomUUIDv7(), false)).toBe(false);
  });

  test("finds a key by hash with its tenant, and never a revoked one", async () => {
    const acme = await addTenant(store);
    const key = apiKey(acme.id, "pr_live_abcd", "a".repeat(64));
    await store.tenants.createApiKey(key);
    const found = await store.tenants.findApiKeyByHash(key.hash);
    expect(found?.tenant).toEqual(acme);
    expect(found?.key.id).toBe(key.id);
    expect(await store.tenants.findApiKeyByHash("b".repeat(64))).toBeNull();

    await store.tenants.revokeApiKeys({ id: key.id }, clock.now());
    expect(await store.tenants.findApiKeyByHash(key.hash)).toBeNull();
  });

  test("a remembered key reflects revocations and subscription changes made here or by another connection", async () => {
    const acme = await addTenant(store);
    const key = apiKey(acme.id, "pr_live_efgh", "e".repeat(64));
    await store.tenants.createApiKey(key);
    expect((await store.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive).toBe(true);
    // Callers get copies: changing one does not change what the next caller sees.
    const found = await store.tenants.findApiKeyByHash(key.hash);
    if (found) found.tenant.subscriptionActive = false;
    expect((await store.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive).toBe(true);

    await store.tenants.setSubscription(acme.id, false);
    expect((await store.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive).toBe(false);

    // Another connection (the CLI is another process) commits: the next lookup sees it.
    const other = await openSqliteStore({ url: `file:${store.path}`, clock });
    try {
      await other.tenants.setSubscription(acme.id, true);
      expect((await store.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive).toBe(true);
      await other.tenants.revokeApiKeys({ id: key.id }, clock.now());
      expect(await store.tenants.findApiKeyByHash(key.hash)).toBeNull();
    } finally {
      await other.close();
    }
  });

  test("a duplicate key hash is a conflict and a key of an unknown tenant is invalid", async () => {
    const acme = await addTenant(store);
    await store.tenants.createApiKey(apiKey(acme.id, "pr_live_1111", "c".repeat(64)));
    await expect(
      store.tenants.createApiKey(apiKey(acme.id, "pr_live_2222", "c".repeat(64))),
    ).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(
      store.tenants.createApiKey(apiKey(Bun.randomUUIDv7(), "pr_live_3333", "d".repeat(64))),
    ).rejects.toMatchObject({ code: "invalid" });
  });

  test("last_used_at is written at most once a minute per key", async () => {
    const acme = await addTenant(store);
    const key = apiKey(acme.id, "pr_live_abcd", "e".repeat(64));
    await store.tenants.createApiKey(key);
    const lastUsed = async () => (await store.tenants.listApiKeys(acme.id))[0]?.lastUsedAt?.getTime();

    const firstUse = clock.now().getTime();
    expect((await store.tenants.findApiKeyByHash(key.hash))?.key.lastUsedAt?.getTime()).toBe(firstUse);
    expect(await lastUsed()).toBe(firstUse);

    clock.advance(59_000);
    await store.tenants.findApiKeyByHash(key.hash);
    expect(await lastUsed()).toBe(firstUse);

    clock.advance(1_000);
    await store.tenants.findApiKeyByHash(key.hash);
    expect(await lastUsed()).toBe(firstUse + 60_000);
  });

  test("lists only the tenant's own keys", async () => {
    const acme = await addTenant(store, "acme");
    const other = await addTenant(store, "other");
    await store.tenants.createApiKey(apiKey(acme.id, "pr_live_aaaa", "1".repeat(64)));
    await store.tenants.createApiKey(apiKey(other.id, "pr_live_bbbb", "2".repeat(64)));
    expect((await store.tenants.listApiKeys(acme.id)).map((key) => key.prefix)).toEqual(["pr_live_aaaa"]);
  });

  test("revokes by id, or by a unique prefix or leading part of one", async () => {
    const acme = await addTenant(store);
    const first = apiKey(acme.id, "pr_live_abcd", "3".repeat(64));
    const second = apiKey(acme.id, "pr_live_abxy", "4".repeat(64));
    const third = apiKey(acme.id, "pr_live_zzzz", "5".repeat(64));
    for (const key of [first, second, third]) await store.tenants.createApiKey(key);
    const at = new Date(1_800_000_100_000);

    const byId = await store.tenants.revokeApiKeys({ id: first.id }, at);
    expect(byId.map((key) => [key.id, key.revokedAt?.getTime()])).toEqual([[first.id, at.getTime()]]);
    // Already revoked: nothing more to revoke.
    expect(await store.tenants.revokeApiKeys({ id: first.id }, at)).toEqual([]);

    // "pr_live_ab" matched two active keys before; now only `second` is still active.
    const byPartialPrefix = await store.tenants.revokeApiKeys({ prefix: "pr_live_ab" }, at);
    expect(byPartialPrefix.map((key) => key.id)).toEqual([second.id]);

    const byPrefix = await store.tenants.revokeApiKeys({ prefix: "pr_live_zzzz" }, at);
    expect(byPrefix.map((key) => key.id)).toEqual([third.id]);
    expect(await store.tenants.revokeApiKeys({ prefix: "pr_live_none" }, at)).toEqual([]);
  });

  test("an ambiguous prefix revokes nothing", async () => {
    const acme = await addTenant(store);
    await store.tenants.createApiKey(apiKey(acme.id, "pr_live_ab12", "6".repeat(64)));
    await store.tenants.createApiKey(apiKey(acme.id, "pr_live_ab34", "7".repeat(64)));
    expect(await store.tenants.revokeApiKeys({ prefix: "pr_live_ab" }, new Date())).toEqual([]);
    expect((await store.tenants.listApiKeys(acme.id)).every((key) => key.revokedAt === null)).toBe(true);
  });
});
