import { expect, test } from "bun:test";
import type { ApiKeyRecord, TenantRecord } from "@promptrun/core";
import { addTenant, at } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

const apiKey = (tenantId: string, prefix: string, hash: string): ApiKeyRecord => ({
  id: Bun.randomUUIDv7(),
  tenantId,
  prefix,
  hash,
  createdAt: at(0),
  revokedAt: null,
  lastUsedAt: null,
});

export const tenantConformance = ({ store, clock }: ConformanceContext): void => {
  test("creates, reads and lists tenants; a duplicate id is a conflict", async () => {
    const acme = await addTenant(store(), "acme");
    const other = await addTenant(store(), "other");
    expect(await store().tenants.get(acme.id)).toEqual(acme);
    expect(await store().tenants.get(Bun.randomUUIDv7())).toBeNull();
    expect(await store().tenants.get("not-a-uuid")).toBeNull();
    expect((await store().tenants.list()).map((tenant) => tenant.id)).toEqual([acme.id, other.id].sort());
    await expect(
      store().tenants.create({ ...acme, name: "again" } satisfies TenantRecord),
    ).rejects.toMatchObject({ code: "conflict" });
  });

  test("setSubscription flips the flag and reports unknown tenants", async () => {
    const acme = await addTenant(store());
    expect(await store().tenants.setSubscription(acme.id, false)).toBe(true);
    expect((await store().tenants.get(acme.id))?.subscriptionActive).toBe(false);
    expect(await store().tenants.setSubscription(acme.id, true)).toBe(true);
    expect((await store().tenants.get(acme.id))?.subscriptionActive).toBe(true);
    expect(await store().tenants.setSubscription(Bun.randomUUIDv7(), false)).toBe(false);
  });

  test("finds a key by hash with its tenant, and never a revoked one", async () => {
    const acme = await addTenant(store());
    const key = apiKey(acme.id, "pr_live_abcd", "a".repeat(64));
    await store().tenants.createApiKey(key);
    const found = await store().tenants.findApiKeyByHash(key.hash);
    expect(found?.tenant).toEqual(acme);
    expect(found?.key).toEqual({ ...key, lastUsedAt: clock.now() });
    expect(await store().tenants.findApiKeyByHash("b".repeat(64))).toBeNull();

    await store().tenants.revokeApiKeys({ id: key.id }, clock.now());
    expect(await store().tenants.findApiKeyByHash(key.hash)).toBeNull();
  });

  test("accessOf: the subscription and whether the named key is live, in one lookup", async () => {
    const acme = await addTenant(store(), "acme");
    const other = await addTenant(store(), "other");
    const key = apiKey(acme.id, "pr_live_acce", "e".repeat(64));
    const othersKey = apiKey(other.id, "pr_live_othr", "f".repeat(64));
    await store().tenants.createApiKey(key);
    await store().tenants.createApiKey(othersKey);
    expect(await store().tenants.accessOf(acme.id)).toEqual({ subscriptionActive: true, keyLive: true });
    expect(await store().tenants.accessOf(acme.id, key.id)).toEqual({
      subscriptionActive: true,
      keyLive: true,
    });
    // Another tenant's key, or one never created, is not live for this tenant.
    expect(await store().tenants.accessOf(acme.id, othersKey.id)).toEqual({
      subscriptionActive: true,
      keyLive: false,
    });
    expect((await store().tenants.accessOf(acme.id, Bun.randomUUIDv7()))?.keyLive).toBe(false);
    await store().tenants.revokeApiKeys({ id: key.id }, clock.now());
    expect(await store().tenants.accessOf(acme.id, key.id)).toEqual({
      subscriptionActive: true,
      keyLive: false,
    });
    await store().tenants.setSubscription(acme.id, false);
    expect(await store().tenants.accessOf(acme.id)).toEqual({ subscriptionActive: false, keyLive: true });
    expect(await store().tenants.accessOf(Bun.randomUUIDv7(), key.id)).toBeNull();
    expect(await store().tenants.accessOf("not-a-uuid")).toBeNull();
  });

  test("a duplicate key hash is a conflict and a key of an unknown tenant is invalid", async () => {
    const acme = await addTenant(store());
    await store().tenants.createApiKey(apiKey(acme.id, "pr_live_1111", "c".repeat(64)));
    await expect(
      store().tenants.createApiKey(apiKey(acme.id, "pr_live_2222", "c".repeat(64))),
    ).rejects.toMatchObject({ code: "conflict" });
    await expect(
      store().tenants.createApiKey(apiKey(Bun.randomUUIDv7(), "pr_live_3333", "d".repeat(64))),
    ).rejects.toMatchObject({ code: "invalid" });
  });

  test("last_used_at is written at most once a minute per key", async () => {
    const acme = await addTenant(store());
    const key = apiKey(acme.id, "pr_live_abcd", "e".repeat(64));
    await store().tenants.createApiKey(key);
    const lastUsed = async () => (await store().tenants.listApiKeys(acme.id))[0]?.lastUsedAt?.getTime();

    const firstUse = clock.now().getTime();
    expect((await store().tenants.findApiKeyByHash(key.hash))?.key.lastUsedAt?.getTime()).toBe(firstUse);
    expect(await lastUsed()).toBe(firstUse);

    clock.advance(59_000);
    expect((await store().tenants.findApiKeyByHash(key.hash))?.key.lastUsedAt?.getTime()).toBe(firstUse);
    expect(await lastUsed()).toBe(firstUse);

    clock.advance(1_000);
    await store().tenants.findApiKeyByHash(key.hash);
    expect(await lastUsed()).toBe(firstUse + 60_000);
  });

  test("lists only the tenant's own keys, oldest first", async () => {
    const acme = await addTenant(store(), "acme");
    const other = await addTenant(store(), "other");
    const newer = { ...apiKey(acme.id, "pr_live_aaa2", "1".repeat(64)), createdAt: at(5) };
    const older = apiKey(acme.id, "pr_live_aaa1", "2".repeat(64));
    await store().tenants.createApiKey(newer);
    await store().tenants.createApiKey(older);
    await store().tenants.createApiKey(apiKey(other.id, "pr_live_bbbb", "3".repeat(64)));
    expect(await store().tenants.listApiKeys(acme.id)).toEqual([older, newer]);
  });

  test("revokes by id, or by a unique prefix or leading part of one", async () => {
    const acme = await addTenant(store());
    const first = apiKey(acme.id, "pr_live_abcd", "3".repeat(64));
    const second = apiKey(acme.id, "pr_live_abxy", "4".repeat(64));
    const third = apiKey(acme.id, "pr_live_zzzz", "5".repeat(64));
    for (const key of [first, second, third]) await store().tenants.createApiKey(key);
    const revokedAt = at(100);

    const byId = await store().tenants.revokeApiKeys({ id: first.id }, revokedAt);
    expect(byId).toEqual([{ ...first, revokedAt }]);
    // Already revoked: nothing more to revoke.
    expect(await store().tenants.revokeApiKeys({ id: first.id }, revokedAt)).toEqual([]);

    // "pr_live_ab" matched two active keys before; now only `second` is still active.
    const byPartialPrefix = await store().tenants.revokeApiKeys({ prefix: "pr_live_ab" }, revokedAt);
    expect(byPartialPrefix.map((key) => key.id)).toEqual([second.id]);

    const byPrefix = await store().tenants.revokeApiKeys({ prefix: "pr_live_zzzz" }, revokedAt);
    expect(byPrefix.map((key) => key.id)).toEqual([third.id]);
    expect(await store().tenants.revokeApiKeys({ prefix: "pr_live_none" }, revokedAt)).toEqual([]);
    // A longer text than the stored prefix is not a leading part of it.
    expect(await store().tenants.revokeApiKeys({ prefix: "pr_live_zzzz_more" }, revokedAt)).toEqual([]);
    expect(
      (await store().tenants.listApiKeys(acme.id)).map((key) => key.revokedAt?.getTime() ?? null),
    ).toEqual([revokedAt.getTime(), revokedAt.getTime(), revokedAt.getTime()]);
  });

  test("an ambiguous prefix revokes nothing, and a match needs an id or a prefix", async () => {
    const acme = await addTenant(store());
    await store().tenants.createApiKey(apiKey(acme.id, "pr_live_ab12", "6".repeat(64)));
    await store().tenants.createApiKey(apiKey(acme.id, "pr_live_ab34", "7".repeat(64)));
    expect(await store().tenants.revokeApiKeys({ prefix: "pr_live_ab" }, at(1))).toEqual([]);
    expect((await store().tenants.listApiKeys(acme.id)).every((key) => key.revokedAt === null)).toBe(true);
    await expect(store().tenants.revokeApiKeys({}, at(1))).rejects.toMatchObject({ code: "invalid" });
    await expect(store().tenants.revokeApiKeys({ prefix: "" }, at(1))).rejects.toMatchObject({
      code: "invalid",
    });
  });
};
