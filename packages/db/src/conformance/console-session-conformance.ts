import { expect, test } from "bun:test";
import type { ApiKeyRecord, ConsoleSessionRecord, Store, TenantRecord } from "@promptrun/core";
import { addTenant, at } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

const HOUR = 3600_000;

const addKey = async (store: Store, tenant: TenantRecord, fill: string): Promise<ApiKeyRecord> => {
  const key: ApiKeyRecord = {
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    prefix: `pr_live_${fill.repeat(8)}`,
    hash: fill.repeat(64),
    createdAt: at(0),
    revokedAt: null,
    lastUsedAt: null,
  };
  await store.tenants.createApiKey(key);
  return key;
};

const sessionOf = (key: ApiKeyRecord, hashFill: string, createdAt: Date): ConsoleSessionRecord => ({
  tokenHash: hashFill.repeat(64).slice(0, 64),
  tenantId: key.tenantId,
  apiKeyId: key.id,
  createdAt,
  lastSeenAt: createdAt,
  expiresAt: new Date(createdAt.getTime() + 7 * 24 * HOUR),
});

const MANY = { maxPerKey: 50 };

export const consoleSessionConformance = ({ store }: ConformanceContext): void => {
  test("finds a session with its tenant and key; an unknown hash finds nothing", async () => {
    const acme = await addTenant(store(), "acme");
    const key = await addKey(store(), acme, "a");
    const session = sessionOf(key, "1", at(10));
    await store().consoleSessions.create(session, MANY);
    expect(await store().consoleSessions.find(session.tokenHash)).toEqual({ session, tenant: acme, key });
    expect(await store().consoleSessions.find("2".repeat(64))).toBeNull();
    expect(await store().consoleSessions.find("not a hash")).toBeNull();
  });

  test("a session of an unknown tenant or key is invalid; a duplicate hash is a conflict", async () => {
    const acme = await addTenant(store());
    const key = await addKey(store(), acme, "b");
    await store().consoleSessions.create(sessionOf(key, "1", at(10)), MANY);
    await expect(store().consoleSessions.create(sessionOf(key, "1", at(11)), MANY)).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(
      store().consoleSessions.create({ ...sessionOf(key, "2", at(10)), apiKeyId: Bun.randomUUIDv7() }, MANY),
    ).rejects.toMatchObject({ code: "invalid" });
    await expect(
      store().consoleSessions.create({ ...sessionOf(key, "3", at(10)), tenantId: Bun.randomUUIDv7() }, MANY),
    ).rejects.toMatchObject({ code: "invalid" });
    expect(await store().consoleSessions.find("2".repeat(64))).toBeNull();
  });

  test("a revoked key is read with its revocation, in the same lookup, at once", async () => {
    const acme = await addTenant(store());
    const key = await addKey(store(), acme, "c");
    const session = sessionOf(key, "1", at(10));
    await store().consoleSessions.create(session, MANY);
    // A lookup first, so a store that remembered anything would be caught.
    expect((await store().consoleSessions.find(session.tokenHash))?.key.revokedAt).toBeNull();
    await store().tenants.revokeApiKeys({ id: key.id }, at(20));
    expect((await store().consoleSessions.find(session.tokenHash))?.key.revokedAt).toEqual(at(20));
  });

  test("touch moves lastSeenAt forward, never back; delete removes the row once", async () => {
    const acme = await addTenant(store());
    const key = await addKey(store(), acme, "d");
    const session = sessionOf(key, "1", at(10));
    await store().consoleSessions.create(session, MANY);
    const lastSeen = async () => (await store().consoleSessions.find(session.tokenHash))?.session.lastSeenAt;

    await store().consoleSessions.touch(session.tokenHash, at(70));
    expect(await lastSeen()).toEqual(at(70));
    await store().consoleSessions.touch(session.tokenHash, at(40));
    expect(await lastSeen()).toEqual(at(70));
    await store().consoleSessions.touch("9".repeat(64), at(80));

    expect(await store().consoleSessions.delete(session.tokenHash)).toBe(true);
    expect(await store().consoleSessions.delete(session.tokenHash)).toBe(false);
    expect(await store().consoleSessions.find(session.tokenHash)).toBeNull();
  });

  test("create keeps a key's newest maxPerKey sessions and never touches another key's", async () => {
    const acme = await addTenant(store());
    const key = await addKey(store(), acme, "e");
    const otherKey = await addKey(store(), acme, "f");
    const other = sessionOf(otherKey, "0", at(1));
    await store().consoleSessions.create(other, { maxPerKey: 3 });
    const sessions = ["1", "2", "3", "4", "5"].map((fill, index) => sessionOf(key, fill, at(10 + index)));
    for (const session of sessions) await store().consoleSessions.create(session, { maxPerKey: 3 });
    const alive = [];
    for (const session of sessions)
      if ((await store().consoleSessions.find(session.tokenHash)) !== null) alive.push(session.tokenHash[0]);
    expect(alive).toEqual(["3", "4", "5"]);
    expect(await store().consoleSessions.find(other.tokenHash)).not.toBeNull();
  });

  test("deleteEnded removes expired, idle and revoked-key sessions and keeps live ones", async () => {
    const acme = await addTenant(store());
    const key = await addKey(store(), acme, "7");
    const revokedKey = await addKey(store(), acme, "8");
    const now = at(8 * 24 * 3600);
    const idleBefore = new Date(now.getTime() - 12 * HOUR);
    const live = { ...sessionOf(key, "1", new Date(now.getTime() - 2 * HOUR)) };
    const expired = {
      ...sessionOf(key, "2", at(0)),
      lastSeenAt: new Date(now.getTime() - HOUR),
      expiresAt: now,
    };
    const idle = { ...sessionOf(key, "3", new Date(now.getTime() - 13 * HOUR)), lastSeenAt: idleBefore };
    const ofRevoked = sessionOf(revokedKey, "4", new Date(now.getTime() - HOUR));
    for (const session of [live, expired, idle, ofRevoked])
      await store().consoleSessions.create(session, MANY);
    await store().tenants.revokeApiKeys({ id: revokedKey.id }, now);

    expect(await store().consoleSessions.deleteEnded(now, idleBefore)).toBe(3);
    expect(await store().consoleSessions.find(live.tokenHash)).not.toBeNull();
    for (const ended of [expired, idle, ofRevoked])
      expect(await store().consoleSessions.find(ended.tokenHash)).toBeNull();
    expect(await store().consoleSessions.deleteEnded(now, idleBefore)).toBe(0);
  });
};
