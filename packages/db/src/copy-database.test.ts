import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { StoredMessage } from "@promptrun/core";
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

  const imported = [
    { role: "user" as const, content: "old question", externalId: "ext-1", createdAt: at(0) },
    { role: "assistant" as const, content: "old answer" },
  ];
  /** A source database with a tenant, a prompt, a pending run and two imported messages on its thread. */
  const seed = async (url: string) => {
    const store = await openSqliteStore({ url });
    const tenant = await addTenant(store, "acme");
    const version = await pushPrompt(store, tenant.id);
    const run = newRun(version, { createdAt: at(1) });
    await store.runs.create(run);
    await store.runs.importMessages(tenant.id, run.threadId, "default", imported, at(2));
    await store.close();
    return { tenant, run };
  };
  const importedAsRead = (
    threadId: string,
  ): { items: StoredMessage[]; nextCursor: null; threadId: string } => ({
    items: [
      {
        runId: null,
        externalId: "ext-1",
        channel: "default",
        role: "user",
        content: "old question",
        createdAt: at(0),
      },
      { runId: null, channel: "default", role: "assistant", content: "old answer", createdAt: at(2) },
    ],
    nextCursor: null,
    threadId,
  });

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
      messages: 2,
    });
    const copy = await openSqliteStore({ url: to });
    try {
      expect(await copy.tenants.get(tenant.id)).toEqual(tenant);
      expect((await copy.runs.listPending()).map((pending) => pending.id)).toEqual([run.id]);
      const { threadId, ...page } = importedAsRead(run.threadId);
      expect(await copy.runs.listMessages(tenant.id, threadId, "default", { limit: 10 })).toEqual(page);
      // The externalId's unique index came along: a repeat is skipped.
      expect(await copy.runs.importMessages(tenant.id, threadId, "default", imported, at(3))).toEqual({
        imported: 1,
        skipped: 1,
      });
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
      const { tenant, run } = await seed(from);
      expect((await copyDatabase(from, database.url)).runs).toBe(1);
      const copy = await openPostgresStore({ url: database.url });
      try {
        expect((await copy.runs.listClaimable(at(2), 10)).map((claimable) => claimable.id)).toEqual([run.id]);
        const { threadId, ...page } = importedAsRead(run.threadId);
        expect(await copy.runs.listMessages(tenant.id, threadId, "default", { limit: 10 })).toEqual(page);
      } finally {
        await copy.close();
      }
    });
  });
});
