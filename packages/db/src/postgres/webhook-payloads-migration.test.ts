import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { POSTGRES_MIGRATIONS_FOLDER } from "./migrate.ts";
import { checkPostgres, createTestDatabase } from "./test-database.ts";

const available = await checkPostgres();
const temporary: string[] = [];
afterAll(() => {
  for (const path of temporary.splice(0)) rmSync(path, { recursive: true, force: true });
});

/** The committed migrations up to (not including) `tag`, as their own folder. */
const migrationsBefore = (tag: string): string => {
  const folder = mkdtempSync(join(tmpdir(), "promptrun-pg-migrations-"));
  temporary.push(folder);
  cpSync(POSTGRES_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
  const index = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(index).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, index);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
};

test.skipIf(!available)(
  "0002_webhook_payloads moves each run event's body into webhook_payloads once; deliveries survive",
  async () => {
    const database = await createTestDatabase();
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const db = drizzle({ client });
      await migrate(db, { migrationsFolder: migrationsBefore("0002_webhook_payloads") });
      // Outbox rows as the previous schema stored them; foreign keys are off on this connection
      // until the migration ran (their parents do not matter to it).
      await client`SET session_replication_role = replica`;
      const at = (ms: number) => new Date(1_700_000_000_000 + ms);
      for (const [id, webhook, run, type, payload, created] of [
        ["d1", "w1", "run-a", "run.completed", '{"run":"a"}', 0],
        ["d2", "w2", "run-a", "run.completed", '{"run":"a"}', 1],
        ["d3", "w1", "run-b", "run.failed", '{"run":"b"}', 2],
      ] as const) {
        await client`INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, run_id, event_type, payload, status, attempts, next_attempt_at, created_at)
          VALUES (${id}, ${webhook}, 't', ${run}, ${type}, ${payload}, 'pending', 0, ${at(0).toISOString()}, ${at(created).toISOString()})`;
      }
      await migrate(db, { migrationsFolder: POSTGRES_MIGRATIONS_FOLDER });
      await client`SET session_replication_role = DEFAULT`;

      const payloads = await client<
        { run_id: string; event_type: string; tenant_id: string; payload: string; created_at: Date }[]
      >`SELECT run_id, event_type, tenant_id, payload, created_at FROM webhook_payloads ORDER BY run_id`;
      expect(payloads.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() }))).toEqual(
        [
          {
            run_id: "run-a",
            event_type: "run.completed",
            tenant_id: "t",
            payload: '{"run":"a"}',
            created_at: at(0).toISOString(),
          },
          {
            run_id: "run-b",
            event_type: "run.failed",
            tenant_id: "t",
            payload: '{"run":"b"}',
            created_at: at(2).toISOString(),
          },
        ],
      );
      expect([...(await client`SELECT id, status FROM webhook_deliveries ORDER BY id`)]).toEqual([
        { id: "d1", status: "pending" },
        { id: "d2", status: "pending" },
        { id: "d3", status: "pending" },
      ]);
      const columns =
        await client`SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_deliveries'`;
      expect(columns.map((column) => column.column_name)).not.toContain("payload");
    } finally {
      await client.end({ timeout: 5 });
      await database.drop();
    }
  },
);
