import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { ApiKeyRecord } from "@promptrun/core";
import { addTenant, manualClock } from "@promptrun/core/testing";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { nextTurn, openTempStore } from "./test-fixtures.ts";

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
  const clock = manualClock(new Date(1_800_000_000_000));

  beforeEach(async () => {
    ({ store, dispose } = await openTempStore({ clock }));
  });
  afterEach(() => dispose());

  test("a remembered key reflects revocations and subscription changes made here, or by another connection from the next turn", async () => {
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

    // Another connection (the CLI is another process) commits: a lookup from the next event-loop
    // turn on sees it (the data version is read once per turn).
    const other = await openSqliteStore({ url: `file:${store.path}`, clock });
    try {
      await other.tenants.setSubscription(acme.id, true);
      await nextTurn();
      expect((await store.tenants.findApiKeyByHash(key.hash))?.tenant.subscriptionActive).toBe(true);
      await other.tenants.revokeApiKeys({ id: key.id }, clock.now());
      await nextTurn();
      expect(await store.tenants.findApiKeyByHash(key.hash)).toBeNull();
    } finally {
      await other.close();
    }
  });
});
