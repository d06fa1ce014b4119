import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Clock, Store } from "@promptrun/core";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { createConsoleSessionStore } from "./console-session-store.ts";
import { createDataVersionProbe } from "./data-version.ts";
import { databasePath, MEMORY_PATH } from "./database-path.ts";
import { createEnvironmentStore } from "./environment-store.ts";
import { createGroupCommit } from "./group-commit.ts";
import { createKnowledgeStore } from "./knowledge-store.ts";
import { prepareOwnerOnlyDatabaseFile } from "./owner-only-files.ts";
import { createPromptStore } from "./prompt-store.ts";
import { createRunStore } from "./run-store.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { createTenantStore } from "./tenant-store.ts";
import { createWalSync } from "./wal-sync.ts";
import { createWebhookStore } from "./webhook-store.ts";
import { createWorkflowStore } from "./workflow-store.ts";

/** Committed drizzle-kit migrations, found from this file so the working directory never matters. */
export const SQLITE_MIGRATIONS_FOLDER = join(import.meta.dir, "..", "..", "drizzle");

export interface OpenSqliteStoreOptions {
  /** `file:./data/x.db` (relative to the working directory), `file:/abs/x.db`, or `:memory:`. */
  url: string;
  clock?: Clock;
  /** Most writes committed in one group commit (default 256). */
  maxBatch?: number;
}

export interface SqliteStore extends Store {
  /** The bun:sqlite connection, for tests and the CLI. */
  raw: Database;
  /** Absolute file path, or `:memory:`. */
  path: string;
}

/**
 * drizzle's migrator reads the applied migrations before it takes the write lock, so two
 * processes opening a fresh file at once can both try to apply them; the loser's transaction
 * rolls back, and a second pass then sees them applied.
 */
const applyMigrations = (db: BunSQLiteDatabase): void => {
  try {
    migrate(db, { migrationsFolder: SQLITE_MIGRATIONS_FOLDER });
  } catch {
    migrate(db, { migrationsFolder: SQLITE_MIGRATIONS_FOLDER });
  }
};

const systemClock: Clock = { now: () => new Date() };

/**
 * Opens (creating it and its directory if needed) a SQLite database, applies the pending
 * migrations and returns the stores over it.
 */
export const openSqliteStore = async (options: OpenSqliteStoreOptions): Promise<SqliteStore> => {
  const path = databasePath(options.url);
  if (path !== MEMORY_PATH) prepareOwnerOnlyDatabaseFile(path);
  const raw = new Database(path, { create: true, readwrite: true, strict: true });
  try {
    raw.exec("PRAGMA busy_timeout = 5000");
    raw.exec("PRAGMA journal_mode = WAL");
    // FULL: a run is acknowledged (202) only once its commit would survive a power loss.
    raw.exec("PRAGMA synchronous = FULL");
    raw.exec("PRAGMA foreign_keys = ON");
    // Statement journals and sorts in memory: a create inside the group commit's savepoint
    // otherwise opens a temporary file.
    raw.exec("PRAGMA temp_store = MEMORY");
    // 64 MiB of page cache (default 2 MiB): the run indexes' hot pages stay in memory.
    raw.exec("PRAGMA cache_size = -65536");
    const db = drizzle({ client: raw });
    applyMigrations(db);
    const context: SqliteContext = {
      db,
      raw,
      clock: options.clock ?? systemClock,
      dataVersion: createDataVersionProbe(raw),
    };
    // A file's group commits flush the WAL off the event loop. Only in WAL mode: `:memory:` has
    // nothing to flush, and a file system without WAL support keeps a rollback journal, whose
    // NORMAL mode skips syncs that keep a commit atomic, so it stays FULL throughout.
    const journalMode = raw.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode;
    const walSync = path !== MEMORY_PATH && journalMode === "wal" ? createWalSync(path) : undefined;
    const groupCommit = createGroupCommit(raw, {
      maxBatch: options.maxBatch ?? 256,
      ...(walSync ? { walSync } : {}),
    });
    let closed = false;
    return {
      raw,
      path,
      tenants: createTenantStore(context),
      prompts: createPromptStore(context),
      runs: createRunStore(context, { groupCommit }),
      environments: createEnvironmentStore(context),
      webhooks: createWebhookStore(context),
      consoleSessions: createConsoleSessionStore(context),
      knowledge: createKnowledgeStore(context),
      workflows: createWorkflowStore(context, groupCommit),
      async close() {
        if (closed) return;
        closed = true;
        groupCommit.close();
        walSync?.close();
        raw.close();
      },
    };
  } catch (error) {
    raw.close();
    throw error;
  }
};
