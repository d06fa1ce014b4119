import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { SQLITE_MIGRATIONS_FOLDER } from "./open.ts";

const TAG = "0008_prompt_webhooks";
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** The committed migrations before 0008, as their own folder. */
const migrationsBefore = (): string => {
  const folder = mkdtempSync(join(tmpdir(), "promptrun-migrations-"));
  folders.push(folder);
  cpSync(SQLITE_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
  const index = journal.entries.findIndex((entry) => entry.tag === TAG);
  expect(index).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, index);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
};

/** Inserts a row, filling every other NOT NULL column without a default with 1. */
const insertRow = (raw: Database, table: string, values: Record<string, string | number | null>) => {
  const columns = raw
    .query(`SELECT name, "notnull", dflt_value FROM pragma_table_info('${table}')`)
    .all() as Array<{
    name: string;
    notnull: number;
    dflt_value: string | null;
  }>;
  const row: Record<string, string | number | null> = {};
  for (const column of columns) if (column.notnull && column.dflt_value === null) row[column.name] = 1;
  Object.assign(row, values);
  const names = Object.keys(row);
  raw
    .prepare(`INSERT INTO ${table} (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`)
    .run(...names.map((name) => row[name] ?? null));
};

test(`${TAG} keeps existing deliveries (run events, event_id null) and their attempts`, () => {
  const raw = new Database(":memory:", { strict: true });
  raw.exec("PRAGMA foreign_keys = ON");
  const db = drizzle({ client: raw });
  migrate(db, { migrationsFolder: migrationsBefore() });
  // The rows a delivery references (theirs may dangle: only the delivery's are checked).
  raw.exec("PRAGMA foreign_keys = OFF");
  insertRow(raw, "tenants", { id: "t" });
  insertRow(raw, "webhooks", { id: "w1", tenant_id: "t", events: '["run.completed"]' });
  insertRow(raw, "runs", { id: "r1", tenant_id: "t" });
  insertRow(raw, "webhook_payloads", {
    run_id: "r1",
    event_type: "run.completed",
    tenant_id: "t",
    payload: "{}",
  });
  insertRow(raw, "webhook_deliveries", {
    id: "d1",
    webhook_id: "w1",
    tenant_id: "t",
    run_id: "r1",
    event_type: "run.completed",
    status: "delivered",
    attempts: 1,
  });
  insertRow(raw, "webhook_attempts", { id: "a1", delivery_id: "d1", attempt: 1, response_status: 200 });
  raw.exec("PRAGMA foreign_keys = ON");

  migrate(db, { migrationsFolder: SQLITE_MIGRATIONS_FOLDER });

  expect(raw.query("SELECT id, run_id, event_id, status FROM webhook_deliveries").all()).toEqual([
    { id: "d1", run_id: "r1", event_id: null, status: "delivered" },
  ]);
  expect(raw.query("SELECT id, delivery_id, response_status FROM webhook_attempts").all()).toEqual([
    { id: "a1", delivery_id: "d1", response_status: 200 },
  ]);
  expect(raw.query("SELECT name FROM sqlite_master WHERE name LIKE '__%kept'").all()).toEqual([]);
  const violations = raw.query("PRAGMA foreign_key_check").all() as Array<{ table: string }>;
  expect(violations.filter((row) => row.table.startsWith("webhook_"))).toEqual([]);
  raw.close();
});
