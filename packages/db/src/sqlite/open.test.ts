import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { addTenant, newRun, pushPrompt } from "@promptrun/core/testing";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { createTempDirectory, type TempDirectory } from "./test-fixtures.ts";

const pragma = (store: SqliteStore, name: string): unknown =>
  Object.values(store.raw.query(`PRAGMA ${name}`).get() as Record<string, unknown>)[0];

const tableNames = (store: SqliteStore): string[] =>
  store.raw
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((row) => row.name);

const appliedMigrations = (store: SqliteStore): number =>
  store.raw.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()?.n ?? -1;

describe("openSqliteStore", () => {
  let directory: TempDirectory;
  afterEach(() => directory?.remove());

  test("applies the migrations to a fresh file and sets the durability pragmas", async () => {
    directory = createTempDirectory();
    const path = join(directory.path, "nested", "deeper", "fresh.db");
    const store = await openSqliteStore({ url: `file:${path}` });
    try {
      expect(store.path).toBe(path);
      expect(existsSync(path)).toBe(true);
      expect(tableNames(store)).toEqual(
        expect.arrayContaining([
          "tenants",
          "api_keys",
          "prompts",
          "prompt_versions",
          "prompt_tags",
          "prompt_tag_history",
          "threads",
          "runs",
          "messages",
          "idempotency_keys",
          "environments",
          "env_vars",
          "webhooks",
          "webhook_deliveries",
          "webhook_attempts",
        ]),
      );
      expect(appliedMigrations(store)).toBeGreaterThan(0);
      expect(pragma(store, "journal_mode")).toBe("wal");
      expect(pragma(store, "synchronous")).toBe(2); // FULL
      expect(pragma(store, "foreign_keys")).toBe(1);
      expect(pragma(store, "busy_timeout")).toBe(5000);
    } finally {
      await store.close();
    }
  });

  test("re-opening keeps the data and applies nothing twice", async () => {
    directory = createTempDirectory();
    const url = `file:${join(directory.path, "reopen.db")}`;
    const first = await openSqliteStore({ url });
    const tenant = await addTenant(first);
    const migrations = appliedMigrations(first);
    await first.close();

    const second = await openSqliteStore({ url });
    try {
      expect(appliedMigrations(second)).toBe(migrations);
      expect(await second.tenants.get(tenant.id)).toEqual(tenant);
    } finally {
      await second.close();
    }
  });

  test("works in memory", async () => {
    const store = await openSqliteStore({ url: ":memory:" });
    try {
      const tenant = await addTenant(store);
      expect(await store.tenants.list()).toEqual([tenant]);
      expect(pragma(store, "foreign_keys")).toBe(1);
    } finally {
      await store.close();
    }
  });

  test("close is idempotent and later calls are refused", async () => {
    const store = await openSqliteStore({ url: ":memory:" });
    const tenant = await addTenant(store);
    const version = await pushPrompt(store, tenant.id);
    await store.close();
    await store.close();
    await expect(store.runs.create(newRun(version))).rejects.toMatchObject({ code: "unavailable" });
    await expect(store.tenants.get(tenant.id)).rejects.toThrow();
  });

  test("finds its migrations whatever the working directory", async () => {
    directory = createTempDirectory();
    const entry = join(import.meta.dir, "..", "index.ts");
    const script = `
      const { openSqliteStore } = await import(${JSON.stringify(entry)});
      const store = await openSqliteStore({ url: "file:./relative/here.db" });
      const row = store.raw.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'runs'").get();
      console.log(JSON.stringify({ path: store.path, runsTable: row.n }));
      await store.close();
    `;
    const child = Bun.spawn(["bun", "-e", script], { cwd: directory.path, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    expect(stderr).toBe("");
    expect(exitCode).toBe(0);
    const reported = JSON.parse(stdout.trim()) as { path: string; runsTable: number };
    expect(reported.runsTable).toBe(1);
    expect(reported.path.endsWith(join("relative", "here.db"))).toBe(true);
    expect(existsSync(join(directory.path, "relative", "here.db"))).toBe(true);
  });

  test("the database file, its -wal and -shm are owner-only (0600) whatever the umask", async () => {
    directory = createTempDirectory();
    const path = join(directory.path, "data", "private.db");
    const previousUmask = process.umask(0o022);
    try {
      const store = await openSqliteStore({ url: `file:${path}` });
      try {
        await addTenant(store, "acme");
        for (const file of [path, `${path}-wal`, `${path}-shm`])
          expect({ file, mode: statSync(file).mode & 0o777 }).toEqual({ file, mode: 0o600 });
        expect(statSync(join(directory.path, "data")).mode & 0o777).toBe(0o700);
      } finally {
        await store.close();
      }
    } finally {
      process.umask(previousUmask);
    }
  });

  test("an existing world-readable database (and its -wal/-shm) is tightened to 0600 on open", async () => {
    directory = createTempDirectory();
    const path = join(directory.path, "old.db");
    // An install from before this rule: the files of a live database, world-readable.
    const first = await openSqliteStore({ url: `file:${path}` });
    await addTenant(first, "acme");
    for (const file of [path, `${path}-wal`, `${path}-shm`]) chmodSync(file, 0o644);
    const reopened = await openSqliteStore({ url: `file:${path}` });
    try {
      for (const file of [path, `${path}-wal`, `${path}-shm`])
        expect({ file, mode: statSync(file).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    } finally {
      await reopened.close();
      await first.close();
    }
  });
});
