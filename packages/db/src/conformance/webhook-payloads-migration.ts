import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A webhook_deliveries row as the schema before the webhook_payloads migration stored it. */
export interface LegacyDelivery {
  id: string;
  webhookId: string;
  runId: string;
  eventType: string;
  /** The body, on every delivery. */
  payload: string;
  createdAt: Date;
}

/** A webhook_payloads row as read back, its created_at as a Date. */
export interface PayloadRow {
  run_id: string;
  event_type: string;
  tenant_id: string;
  payload: string;
  created_at: Date;
}

/** One dialect's fresh database, seen through what the migration test needs. */
export interface MigratingDatabase {
  /** Applies the migrations of `folder` (drizzle's migrator). */
  migrate(folder: string): Promise<void>;
  /** Inserts pending deliveries of tenant "t" (due at `dueAt`) with its references unchecked. */
  insertLegacyDeliveries(rows: LegacyDelivery[], dueAt: Date): Promise<void>;
  /** Checks references again (after the migration). */
  checkReferences(): Promise<void>;
  /** webhook_payloads, ordered by run_id. */
  payloads(): Promise<PayloadRow[]>;
  /** webhook_deliveries' (id, status), ordered by id. */
  deliveries(): Promise<Array<{ id: string; status: string }>>;
  /** webhook_deliveries' column names. */
  deliveryColumns(): Promise<string[]>;
  close(): Promise<void>;
}

export interface WebhookPayloadsMigrationDialect {
  /** The dialect's committed migrations. */
  migrationsFolder: string;
  /** The migration's tag in the dialect's journal. */
  tag: string;
  /** False when the database is not reachable: the test is skipped (its helper said why). */
  available: boolean;
  open(): Promise<MigratingDatabase>;
}

/**
 * The webhook_payloads migration, run by each dialect's test: each run event's body moves into
 * webhook_payloads once, and the deliveries survive without their payload column.
 */
export const testWebhookPayloadsMigration = ({
  migrationsFolder,
  tag,
  available,
  open,
}: WebhookPayloadsMigrationDialect): void => {
  const temporary: string[] = [];
  afterAll(() => {
    for (const path of temporary.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  /** The committed migrations up to (not including) `tag`, as their own folder. */
  const migrationsBefore = (): string => {
    const folder = mkdtempSync(join(tmpdir(), "promptrun-migrations-"));
    temporary.push(folder);
    cpSync(migrationsFolder, folder, { recursive: true });
    const journalPath = join(folder, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
    const index = journal.entries.findIndex((entry) => entry.tag === tag);
    expect(index).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, index);
    writeFileSync(journalPath, JSON.stringify(journal));
    return folder;
  };

  test.skipIf(!available)(
    `${tag} moves each run event's body into webhook_payloads once; deliveries survive`,
    async () => {
      const database = await open();
      try {
        await database.migrate(migrationsBefore());
        const at = (ms: number) => new Date(1_700_000_000_000 + ms);
        await database.insertLegacyDeliveries(
          [
            {
              id: "d1",
              webhookId: "w1",
              runId: "run-a",
              eventType: "run.completed",
              payload: '{"run":"a"}',
              createdAt: at(0),
            },
            {
              id: "d2",
              webhookId: "w2",
              runId: "run-a",
              eventType: "run.completed",
              payload: '{"run":"a"}',
              createdAt: at(1),
            },
            {
              id: "d3",
              webhookId: "w1",
              runId: "run-b",
              eventType: "run.failed",
              payload: '{"run":"b"}',
              createdAt: at(2),
            },
          ],
          at(0),
        );
        await database.migrate(migrationsFolder);
        await database.checkReferences();

        expect(await database.payloads()).toEqual([
          {
            run_id: "run-a",
            event_type: "run.completed",
            tenant_id: "t",
            payload: '{"run":"a"}',
            created_at: at(0),
          },
          {
            run_id: "run-b",
            event_type: "run.failed",
            tenant_id: "t",
            payload: '{"run":"b"}',
            created_at: at(2),
          },
        ]);
        expect(await database.deliveries()).toEqual([
          { id: "d1", status: "pending" },
          { id: "d2", status: "pending" },
          { id: "d3", status: "pending" },
        ]);
        expect(await database.deliveryColumns()).not.toContain("payload");
      } finally {
        await database.close();
      }
    },
  );
};
