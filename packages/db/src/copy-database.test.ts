import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { addTenant, at, newRun, pushPrompt } from "@promptrun/core/testing";
import { copyDatabase } from "./copy-database.ts";
import { openPostgresStore } from "./postgres/open.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./postgres/test-database.ts";
import { openSqliteStore } from "./sqlite/open.ts";
import { createTempDirectory } from "./sqlite/test-fixtures.ts";

const available = await checkPostgres();

describe("copyDatabase", () => {
  const directories: Array<{ path: string; remove(): void }> = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) directory.remove();
  });
  const sqliteUrl = (name: string) => {
    const directory = createTempDirectory();
    directories.push(directory);
    return `file:${join(directory.path, name)}`;
  };

  /** A source database with a tenant, a prompt and a pending run. */
  const seed = async (url: string) => {
    const store = await openSqliteStore({ url });
    const tenant = await addTenant(store, "acme");
    const version = await pushPrompt(store, tenant.id);
    const run = newRun(version, { createdAt: at(1) });
    await store.runs.create(run);
    await store.close();
    return { tenant, run };
  };

  test("SQLite to SQLite: every row, and the target then works through the port", async () => {
    const from = sqliteUrl("from.db");
    const to = sqliteUrl("to.db");
    const { tenant, run } = await seed(from);
    const counts = await copyDatabase(from, to);
    expect(counts).toMatchObject({
      tenants: 1,
      prompts: 1,
      promptVersions: 1,
      threads: 1,
      runs: 1,
      messages: 0,
    });
    const copy = await openSqliteStore({ url: to });
    try {
      expect(await copy.tenants.get(tenant.id)).toEqual(tenant);
      expect((await copy.runs.listPending()).map((pending) => pending.id)).toEqual([run.id]);
    } finally {
      await copy.close();
    }
    // A second copy into the now non-empty target is refused; the same URL twice too.
    await expect(copyDatabase(from, to)).rejects.toMatchObject({ code: "conflict" });
    await expect(copyDatabase(from, ` ${from}`)).rejects.toMatchObject({ code: "invalid" });
  });

  describe.skipIf(!available)("to Postgres", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(() => database?.drop());

    test("SQLite to Postgres: the pending run is claimable there", async () => {
      const from = sqliteUrl("from.db");
      const { run } = await seed(from);
      expect((await copyDatabase(from, database.url)).runs).toBe(1);
      const copy = await openPostgresStore({ url: database.url });
      try {
        expect((await copy.runs.listClaimable(at(2), 10)).map((claimable) => claimable.id)).toEqual([run.id]);
      } finally {
        await copy.close();
      }
    });
  });
});
