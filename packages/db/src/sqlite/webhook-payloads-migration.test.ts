import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { type PayloadRow, testWebhookPayloadsMigration } from "../conformance/webhook-payloads-migration.ts";
import { SQLITE_MIGRATIONS_FOLDER } from "./open.ts";

testWebhookPayloadsMigration({
  migrationsFolder: SQLITE_MIGRATIONS_FOLDER,
  tag: "0003_webhook_payloads",
  available: true,
  open: async () => {
    const raw = new Database(":memory:", { strict: true });
    const db = drizzle({ client: raw });
    return {
      migrate: async (folder) => migrate(db, { migrationsFolder: folder }),
      insertLegacyDeliveries: async (rows, dueAt) => {
        raw.exec("PRAGMA foreign_keys = OFF");
        const insert = raw.prepare(
          `INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, run_id, event_type, payload, status, attempts, next_attempt_at, created_at)
           VALUES (?, ?, 't', ?, ?, ?, 'pending', 0, ?, ?)`,
        );
        for (const row of rows) {
          insert.run(
            row.id,
            row.webhookId,
            row.runId,
            row.eventType,
            row.payload,
            dueAt.getTime(),
            row.createdAt.getTime(),
          );
        }
      },
      checkReferences: async () => {
        raw.exec("PRAGMA foreign_keys = ON");
      },
      payloads: async () =>
        (
          raw
            .query(
              "SELECT run_id, event_type, tenant_id, payload, created_at FROM webhook_payloads ORDER BY run_id",
            )
            .all() as Array<Omit<PayloadRow, "created_at"> & { created_at: number }>
        ).map((row) => ({ ...row, created_at: new Date(row.created_at) })),
      deliveries: async () =>
        raw.query("SELECT id, status FROM webhook_deliveries ORDER BY id").all() as Array<{
          id: string;
          status: string;
        }>,
      deliveryColumns: async () =>
        (
          raw.query("SELECT name FROM pragma_table_info('webhook_deliveries')").all() as Array<{
            name: string;
          }>
        ).map((column) => column.name),
      close: async () => raw.close(),
    };
  },
});
