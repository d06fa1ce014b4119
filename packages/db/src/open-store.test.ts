import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { addTenant } from "@promptrun/core/testing";
import { openStore, storeKindOf } from "./open-store.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./postgres/test-database.ts";
import { createTempDirectory } from "./sqlite/test-fixtures.ts";

const postgresAvailable = await checkPostgres();

describe("openStore", () => {
  test("tells SQLite and Postgres URLs apart and refuses other schemes", () => {
    expect(storeKindOf("file:./data/promptrun.db")).toBe("sqlite");
    expect(storeKindOf("file:///var/lib/promptrun.db")).toBe("sqlite");
    expect(storeKindOf(":memory:")).toBe("sqlite");
    expect(storeKindOf("./relative.db")).toBe("sqlite");
    expect(storeKindOf("postgres://user:secret@db:5432/promptrun")).toBe("postgres");
    expect(storeKindOf(" PostgreSQL://db/promptrun ")).toBe("postgres");
    expect(() => storeKindOf("mysql://db/promptrun")).toThrow(/unsupported database URL scheme mysql:\/\//);
  });

  test("opens a SQLite file with its migrations applied", async () => {
    const directory = createTempDirectory();
    const store = await openStore(`file:${join(directory.path, "open-store.db")}`);
    try {
      const tenant = await addTenant(store);
      expect(await store.tenants.get(tenant.id)).toEqual(tenant);
    } finally {
      await store.close();
      directory.remove();
    }
  });

  describe.skipIf(!postgresAvailable)("on Postgres", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(() => database?.drop());

    test("opens a Postgres database with its migrations applied", async () => {
      const store = await openStore(database.url, { maxConnections: 2 });
      try {
        const tenant = await addTenant(store);
        expect(await store.tenants.get(tenant.id)).toEqual(tenant);
        expect("client" in store).toBe(true);
      } finally {
        await store.close();
      }
    });
  });
});
