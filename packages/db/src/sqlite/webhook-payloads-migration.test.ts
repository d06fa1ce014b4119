import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { SQLITE_MIGRATIONS_FOLDER } from "./open.ts";

const temporary: string[] = [];
afterEach(() => {
  for (const path of temporary.splice(0)) rmSync(path, { recursive: true, force: true });
});

/** The committed migrations up to (not including) `tag`, as their own folder. */
const migrationsBefore = (tag: string): string => {
  const folder = mkdtempSync(join(tmpdir(), "promptrun-migrations-"));
  temporary.push(folder);
  cpSync(SQLITE_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
  const index = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(index).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, index);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
};

test("0003_webhook_payloads moves each run event's body into webhook_payloads once; deliveries survive", () => {
  const raw = new Database(":memory:", { strict: true });
  const db = drizzle({ client: raw });
  migrate(db, { migrationsFolder: migrationsBefore("0003_webhook_payloads") });
  // Outbox rows as the previous schema stored them: the body on every delivery.
  const insert = raw.prepare(
    `INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, run_id, event_type, payload, status, attempts, next_attempt_at, created_at)
     VALUES (?, ?, 't', ?, ?, ?, 'pending', 0, 1000, ?)`,
  );
  raw.exec("PRAGMA foreign_keys = OFF");
  insert.run("d1", "w1", "run-a", "run.completed", '{"run":"a"}', 1000);
  insert.run("d2", "w2", "run-a", "run.completed", '{"run":"a"}', 1001);
  insert.run("d3", "w1", "run-b", "run.failed", '{"run":"b"}', 1002);

  migrate(db, { migrationsFolder: SQLITE_MIGRATIONS_FOLDER });

  expect(
    raw
      .query(
        "SELECT run_id, event_type, tenant_id, payload, created_at FROM webhook_payloads ORDER BY run_id",
      )
      .all(),
  ).toEqual([
    {
      run_id: "run-a",
      event_type: "run.completed",
      tenant_id: "t",
      payload: '{"run":"a"}',
      created_at: 1000,
    },
    { run_id: "run-b", event_type: "run.failed", tenant_id: "t", payload: '{"run":"b"}', created_at: 1002 },
  ]);
  expect(raw.query("SELECT id, status FROM webhook_deliveries ORDER BY id").all()).toEqual([
    { id: "d1", status: "pending" },
    { id: "d2", status: "pending" },
    { id: "d3", status: "pending" },
  ]);
  const columns = raw.query("SELECT name FROM pragma_table_info('webhook_deliveries')").all() as Array<{
    name: string;
  }>;
  expect(columns.map((column) => column.name)).not.toContain("payload");
  raw.close();
});
