import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";

/** Committed drizzle-kit migrations, found from this file so the working directory never matters. */
export const POSTGRES_MIGRATIONS_FOLDER = join(import.meta.dir, "..", "..", "drizzle-pg");

/** Advisory lock key held while migrating ("prompt" in ASCII, as a bigint). */
const MIGRATION_LOCK_KEY = 0x70726f6d7074;

export interface DatabaseSettings {
  /** The server's `synchronous_commit`: `off` acknowledges commits before they are durable. */
  synchronousCommit: string;
}

/**
 * Applies the pending migrations, under a session advisory lock: several instances starting at
 * once take turns, and the later ones find the migrations applied. The lock lives on the one
 * connection that also migrates, and ends with it if the process dies.
 */
export const applyPostgresMigrations = async (url: string): Promise<DatabaseSettings> => {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`;
    try {
      await migrate(drizzle({ client }), { migrationsFolder: POSTGRES_MIGRATIONS_FOLDER });
    } finally {
      await client`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`;
    }
    const [row] = await client<
      { setting: string }[]
    >`SELECT current_setting('synchronous_commit') AS setting`;
    return { synchronousCommit: row?.setting ?? "on" };
  } finally {
    await client.end({ timeout: 5 });
  }
};
