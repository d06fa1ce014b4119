import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { TenantRecord } from "@promptrun/core";
import { addTenant } from "@promptrun/core/testing";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { openTempStore } from "./test-fixtures.ts";

const at = (seconds: number) => new Date(1_700_000_000_000 + seconds * 1000);

describe("SQLite EnvironmentStore", () => {
  let store: SqliteStore;
  let dispose: () => Promise<void>;
  let acme: TenantRecord;

  beforeEach(async () => {
    ({ store, dispose } = await openTempStore());
    acme = await addTenant(store, "acme");
  });
  afterEach(() => dispose());

  test("a remembered environment comes back as a copy and appears once another connection creates it", async () => {
    const created = await store.environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(1));
    const found = await store.environments.get(acme.id, "production");
    if (found) found.name = "changed";
    expect(await store.environments.get(acme.id, "production")).toEqual(created);

    expect(await store.environments.get(acme.id, "staging")).toBeNull();
    const second = await openSqliteStore({ url: `file:${store.path}` });
    try {
      const staging = await second.environments.ensure(acme.id, "staging", Bun.randomUUIDv7(), at(2));
      expect(await store.environments.get(acme.id, "staging")).toEqual(staging);
    } finally {
      await second.close();
    }
  });
});
