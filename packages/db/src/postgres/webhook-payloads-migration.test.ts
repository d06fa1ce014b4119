import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { type PayloadRow, testWebhookPayloadsMigration } from "../conformance/webhook-payloads-migration.ts";
import { POSTGRES_MIGRATIONS_FOLDER } from "./migrate.ts";
import { checkPostgres, createTestDatabase } from "./test-database.ts";

testWebhookPayloadsMigration({
  migrationsFolder: POSTGRES_MIGRATIONS_FOLDER,
  tag: "0002_webhook_payloads",
  available: await checkPostgres(),
  open: async () => {
    const database = await createTestDatabase();
    // One connection, so the session's settings below hold for every statement.
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    const db = drizzle({ client });
    return {
      migrate: async (folder) => migrate(db, { migrationsFolder: folder }),
      insertLegacyDeliveries: async (rows, dueAt) => {
        // Foreign keys are off on this connection until checkReferences (their parents do not
        // matter to the migration).
        await client`SET session_replication_role = replica`;
        for (const row of rows) {
          await client`INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, run_id, event_type, payload, status, attempts, next_attempt_at, created_at)
            VALUES (${row.id}, ${row.webhookId}, 't', ${row.runId}, ${row.eventType}, ${row.payload}, 'pending', 0, ${dueAt.toISOString()}, ${row.createdAt.toISOString()})`;
        }
      },
      checkReferences: async () => {
        await client`SET session_replication_role = DEFAULT`;
      },
      payloads: async () => {
        const rows = await client<
          PayloadRow[]
        >`SELECT run_id, event_type, tenant_id, payload, created_at FROM webhook_payloads ORDER BY run_id`;
        return rows.map((row) => ({ ...row, created_at: new Date(row.created_at) }));
      },
      deliveries: async () => [
        ...(await client<
          { id: string; status: string }[]
        >`SELECT id, status FROM webhook_deliveries ORDER BY id`),
      ],
      deliveryColumns: async () =>
        (
          await client<
            { column_name: string }[]
          >`SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_deliveries'`
        ).map((column) => column.column_name),
      close: async () => {
        await client.end({ timeout: 5 });
        await database.drop();
      },
    };
  },
});
