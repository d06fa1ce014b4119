import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { SQLITE_MIGRATIONS_FOLDER } from "./open.ts";

const TAG = "0007_thread_import";
const temporary: string[] = [];
afterAll(() => {
  for (const folder of temporary) rmSync(folder, { recursive: true, force: true });
});

function foldersBefore(tag: string): string {
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
}

test(`${TAG} keeps every message and index; run_id becomes nullable, external_id unique per channel`, () => {
  const raw = new Database(":memory:", { strict: true });
  const db = drizzle({ client: raw });
  migrate(db, { migrationsFolder: foldersBefore(TAG) });
  raw.exec("PRAGMA foreign_keys = OFF");
  const insert = raw.prepare(
    "INSERT INTO messages (tenant_id, thread_id, channel, run_id, role, content, parts, created_at) VALUES ('t', 'th', 'default', ?, ?, ?, ?, ?)",
  );
  insert.run("r1", "user", "hi", null, 1);
  insert.run("r1", "assistant", "hello", '[{"type":"text","text":"hello"}]', 2);
  migrate(db, { migrationsFolder: SQLITE_MIGRATIONS_FOLDER });
  const rows = raw
    .query("SELECT seq, run_id, external_id, role, content, parts FROM messages ORDER BY seq")
    .all();
  expect(rows).toEqual([
    { seq: 1, run_id: "r1", external_id: null, role: "user", content: "hi", parts: null },
    {
      seq: 2,
      run_id: "r1",
      external_id: null,
      role: "assistant",
      content: "hello",
      parts: '[{"type":"text","text":"hello"}]',
    },
  ]);
  const indexes = (
    raw.query("SELECT name FROM pragma_index_list('messages')").all() as Array<{ name: string }>
  )
    .map((index) => index.name)
    .sort();
  expect(indexes).toEqual(["messages_external_id_idx", "messages_thread_channel_idx"]);
  const importRow = raw.prepare(
    "INSERT INTO messages (tenant_id, thread_id, channel, run_id, external_id, role, content, created_at) VALUES ('t', 'th', 'default', NULL, ?, 'user', 'x', 3)",
  );
  importRow.run("e1");
  expect(() => importRow.run("e1")).toThrow(/UNIQUE/);
  importRow.run(null);
  importRow.run(null);
  // A new row continues the sequence after the kept ones.
  expect((raw.query("SELECT max(seq) AS seq FROM messages").get() as { seq: number }).seq).toBe(5);
  raw.close();
});
