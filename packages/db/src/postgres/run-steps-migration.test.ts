import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { legacyRunRow, testRunStepsMigration } from "../conformance/run-steps-migration.ts";
import { runs } from "../schema/postgres.ts";
import { POSTGRES_MIGRATIONS_FOLDER } from "./migrate.ts";
import { openPostgresStore, type PostgresStore } from "./open.ts";
import { checkPostgres, createTestDatabase } from "./test-database.ts";

testRunStepsMigration({
  migrationsFolder: POSTGRES_MIGRATIONS_FOLDER,
  tag: "0008_run_steps",
  available: await checkPostgres(),
  open: async () => {
    const database = await createTestDatabase();
    // One connection, so the session's settings below hold for every statement.
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    let store: PostgresStore | null = null;
    return {
      migrate: async (folder) => migrate(drizzle({ client }), { migrationsFolder: folder }),
      insertLegacyRuns: async (legacy) => {
        // References unchecked: the run's tenant and prompt do not matter to the migration.
        await client`SET session_replication_role = replica`;
        for (const run of legacy) {
          const { names, values } = legacyRunRow(runs, run);
          await client.unsafe(
            `INSERT INTO runs (${names.join(", ")}) VALUES (${names.map((_, index) => `$${index + 1}`).join(", ")})`,
            values as postgres.ParameterOrJSON<never>[],
          );
        }
        await client.end({ timeout: 5 });
      },
      openStore: async () => {
        store = await openPostgresStore({ url: database.url, maxConnections: 2 });
        return store;
      },
      close: async () => {
        await store?.close();
        await client.end({ timeout: 5 });
        await database.drop();
      },
    };
  },
});
