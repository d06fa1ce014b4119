import { Database } from "bun:sqlite";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { legacyRunRow, testRunStepsMigration } from "../conformance/run-steps-migration.ts";
import { runs } from "../schema/sqlite.ts";
import { openSqliteStore, SQLITE_MIGRATIONS_FOLDER, type SqliteStore } from "./open.ts";
import { createTempDirectory } from "./test-fixtures.ts";

testRunStepsMigration({
  migrationsFolder: SQLITE_MIGRATIONS_FOLDER,
  tag: "0009_run_steps",
  available: true,
  open: async () => {
    const directory = createTempDirectory();
    const path = join(directory.path, "legacy.db");
    const raw = new Database(path, { create: true, strict: true });
    let store: SqliteStore | null = null;
    return {
      migrate: async (folder) => migrate(drizzle({ client: raw }), { migrationsFolder: folder }),
      insertLegacyRuns: async (legacy) => {
        // References unchecked: the run's tenant and prompt do not matter to the migration.
        raw.exec("PRAGMA foreign_keys = OFF");
        for (const run of legacy) {
          const { names, values } = legacyRunRow(runs, run);
          raw
            .prepare(`INSERT INTO runs (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`)
            .run(...(values as Array<string | number | null>));
        }
        raw.close();
      },
      openStore: async () => {
        store = await openSqliteStore({ url: `file:${path}` });
        return store;
      },
      close: async () => {
        await store?.close();
        directory.remove();
      },
    };
  },
});
