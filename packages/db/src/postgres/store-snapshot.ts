/**
 * Whole-database copy between the two stores (SQLite → Postgres for scale-out, or back): every
 * row of every table, ids, timestamps and message order kept. The snapshot is held in memory, so
 * it suits databases that fit in it; the target must be empty.
 */
import { PromptrunError } from "@promptrun/core";
import { count as countRows, getTableColumns, sql } from "drizzle-orm";
import { drizzle as drizzleSqlite } from "drizzle-orm/bun-sqlite";
import type { PgTable } from "drizzle-orm/pg-core";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import * as pg from "../schema/postgres.ts";
import * as lite from "../schema/sqlite.ts";
import type { SqliteStore } from "../sqlite/open.ts";
import type { PostgresStore } from "./open.ts";
import type { PostgresTransaction } from "./postgres-context.ts";

/**
 * Tables in dependency order: a row's references are always copied before it. Console sessions
 * are not copied: they are tied to the server they were signed in on, and people sign in again.
 */
const TABLES = [
  "tenants",
  "apiKeys",
  "prompts",
  "promptVersions",
  "promptTags",
  "promptTagHistory",
  "threads",
  "runs",
  "messages",
  "idempotencyKeys",
  "workflows",
  "workflowVersions",
  "workflowTags",
  "workflowRuns",
  "workflowIdempotencyKeys",
  "environments",
  "envVars",
  "webhooks",
  "webhookPayloads",
  "webhookEvents",
  "webhookDeliveries",
  "webhookAttempts",
  "knowledgeBases",
  "kbDocuments",
  "kbChunks",
] as const;

type TableName = (typeof TABLES)[number];

/**
 * A chunk as both dialects hold it: without SQLite's rowid `seq` (the FTS5 key, renumbered on
 * import, its triggers refilling the index) and Postgres's generated tsvector.
 */
export type SnapshotChunk = Omit<(typeof lite.kbChunks)["$inferSelect"], "seq">;

/** Every row of every table, as drizzle reads them (Dates, parsed JSON, booleans). */
export type StoreSnapshot = { [K in Exclude<TableName, "kbChunks">]: (typeof lite)[K]["$inferSelect"][] } & {
  kbChunks: SnapshotChunk[];
};

const { seq: _seq, ...liteChunkColumns } = getTableColumns(lite.kbChunks);
const { searchVector: _searchVector, ...pgChunkColumns } = getTableColumns(pg.kbChunks);

/** Rows per INSERT: under both dialects' parameter limits for the widest table (runs, 34 columns). */
const CHUNK = 500;

const chunks = <T>(rows: T[]): T[][] =>
  Array.from({ length: Math.ceil(rows.length / CHUNK) }, (_, index) =>
    rows.slice(index * CHUNK, (index + 1) * CHUNK),
  );

const isSqlite = (store: SqliteStore | PostgresStore): store is SqliteStore => "raw" in store;

const exportSqlite = (store: SqliteStore): StoreSnapshot => {
  const db = drizzleSqlite({ client: store.raw });
  const all = <T extends SQLiteTable>(table: T) => db.select().from(table).all();
  return {
    tenants: all(lite.tenants),
    apiKeys: all(lite.apiKeys),
    prompts: all(lite.prompts),
    promptVersions: all(lite.promptVersions),
    promptTags: all(lite.promptTags),
    promptTagHistory: all(lite.promptTagHistory),
    threads: all(lite.threads),
    runs: all(lite.runs),
    messages: db.select().from(lite.messages).orderBy(lite.messages.seq).all(),
    idempotencyKeys: all(lite.idempotencyKeys),
    workflows: all(lite.workflows),
    workflowVersions: all(lite.workflowVersions),
    workflowTags: all(lite.workflowTags),
    workflowRuns: all(lite.workflowRuns),
    workflowIdempotencyKeys: all(lite.workflowIdempotencyKeys),
    environments: all(lite.environments),
    envVars: all(lite.envVars),
    webhooks: all(lite.webhooks),
    webhookPayloads: all(lite.webhookPayloads),
    webhookEvents: all(lite.webhookEvents),
    webhookDeliveries: all(lite.webhookDeliveries),
    webhookAttempts: all(lite.webhookAttempts),
    knowledgeBases: all(lite.knowledgeBases),
    kbDocuments: all(lite.kbDocuments),
    kbChunks: db
      .select(liteChunkColumns)
      .from(lite.kbChunks)
      .orderBy(lite.kbChunks.documentId, lite.kbChunks.ordinal)
      .all(),
  };
};

const exportPostgres = async (store: PostgresStore): Promise<StoreSnapshot> => {
  // One repeatable-read transaction: every table from the same moment.
  return store.db.transaction(
    async (tx) => {
      return {
        tenants: await tx.select().from(pg.tenants),
        apiKeys: await tx.select().from(pg.apiKeys),
        prompts: await tx.select().from(pg.prompts),
        promptVersions: await tx.select().from(pg.promptVersions),
        promptTags: await tx.select().from(pg.promptTags),
        promptTagHistory: await tx.select().from(pg.promptTagHistory),
        threads: await tx.select().from(pg.threads),
        runs: await tx.select().from(pg.runs),
        messages: await tx.select().from(pg.messages).orderBy(pg.messages.seq),
        idempotencyKeys: await tx.select().from(pg.idempotencyKeys),
        workflows: await tx.select().from(pg.workflows),
        workflowVersions: await tx.select().from(pg.workflowVersions),
        workflowTags: await tx.select().from(pg.workflowTags),
        workflowRuns: await tx.select().from(pg.workflowRuns),
        workflowIdempotencyKeys: await tx.select().from(pg.workflowIdempotencyKeys),
        environments: await tx.select().from(pg.environments),
        envVars: await tx.select().from(pg.envVars),
        webhooks: await tx.select().from(pg.webhooks),
        webhookPayloads: await tx.select().from(pg.webhookPayloads),
        webhookEvents: await tx.select().from(pg.webhookEvents),
        webhookDeliveries: await tx.select().from(pg.webhookDeliveries),
        webhookAttempts: await tx.select().from(pg.webhookAttempts),
        knowledgeBases: await tx.select().from(pg.knowledgeBases),
        kbDocuments: await tx.select().from(pg.kbDocuments),
        kbChunks: await tx
          .select(pgChunkColumns)
          .from(pg.kbChunks)
          .orderBy(pg.kbChunks.documentId, pg.kbChunks.ordinal),
      };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
};

/** Reads every row of the store. */
export const exportAll = async (store: SqliteStore | PostgresStore): Promise<StoreSnapshot> =>
  isSqlite(store) ? exportSqlite(store) : exportPostgres(store);

const importSqlite = (store: SqliteStore, snapshot: StoreSnapshot): void => {
  const db = drizzleSqlite({ client: store.raw });
  db.transaction(
    (tx) => {
      const [existing] = tx.select({ n: countRows() }).from(lite.tenants).all();
      if ((existing?.n ?? 0) > 0) throw new PromptrunError("conflict", "the target store is not empty");
      const insert = <T extends SQLiteTable>(table: T, rows: T["$inferInsert"][]) => {
        for (const chunk of chunks(rows)) tx.insert(table).values(chunk).run();
      };
      insert(lite.tenants, snapshot.tenants);
      insert(lite.apiKeys, snapshot.apiKeys);
      insert(lite.prompts, snapshot.prompts);
      insert(lite.promptVersions, snapshot.promptVersions);
      insert(lite.promptTags, snapshot.promptTags);
      insert(lite.promptTagHistory, snapshot.promptTagHistory);
      insert(lite.threads, snapshot.threads);
      insert(lite.runs, snapshot.runs);
      insert(lite.messages, snapshot.messages);
      insert(lite.idempotencyKeys, snapshot.idempotencyKeys);
      insert(lite.workflows, snapshot.workflows);
      insert(lite.workflowVersions, snapshot.workflowVersions);
      insert(lite.workflowTags, snapshot.workflowTags);
      insert(lite.workflowRuns, snapshot.workflowRuns);
      insert(lite.workflowIdempotencyKeys, snapshot.workflowIdempotencyKeys);
      insert(lite.environments, snapshot.environments);
      insert(lite.envVars, snapshot.envVars);
      insert(lite.webhooks, snapshot.webhooks);
      insert(lite.webhookPayloads, snapshot.webhookPayloads);
      insert(lite.webhookEvents, snapshot.webhookEvents);
      insert(lite.webhookDeliveries, snapshot.webhookDeliveries);
      insert(lite.webhookAttempts, snapshot.webhookAttempts);
      insert(lite.knowledgeBases, snapshot.knowledgeBases);
      insert(lite.kbDocuments, snapshot.kbDocuments);
      insert(lite.kbChunks, snapshot.kbChunks);
    },
    { behavior: "immediate" },
  );
};

const importPostgres = async (store: PostgresStore, snapshot: StoreSnapshot): Promise<void> => {
  await store.db.transaction(async (tx: PostgresTransaction) => {
    // Two imports at once: the second waits, then finds the store not empty.
    await tx.execute(sql`LOCK TABLE tenants IN EXCLUSIVE MODE`);
    const [existing] = await tx.select({ n: countRows() }).from(pg.tenants);
    if ((existing?.n ?? 0) > 0) throw new PromptrunError("conflict", "the target store is not empty");
    const insert = async <T extends PgTable>(table: T, rows: T["$inferInsert"][]) => {
      for (const chunk of chunks(rows)) await tx.insert(table).values(chunk);
    };
    await insert(pg.tenants, snapshot.tenants);
    await insert(pg.apiKeys, snapshot.apiKeys);
    await insert(pg.prompts, snapshot.prompts);
    await insert(pg.promptVersions, snapshot.promptVersions);
    await insert(pg.promptTags, snapshot.promptTags);
    await insert(pg.promptTagHistory, snapshot.promptTagHistory);
    await insert(pg.threads, snapshot.threads);
    await insert(pg.runs, snapshot.runs);
    await insert(pg.messages, snapshot.messages);
    await insert(pg.idempotencyKeys, snapshot.idempotencyKeys);
    await insert(pg.workflows, snapshot.workflows);
    await insert(pg.workflowVersions, snapshot.workflowVersions);
    await insert(pg.workflowTags, snapshot.workflowTags);
    await insert(pg.workflowRuns, snapshot.workflowRuns);
    await insert(pg.workflowIdempotencyKeys, snapshot.workflowIdempotencyKeys);
    await insert(pg.environments, snapshot.environments);
    await insert(pg.envVars, snapshot.envVars);
    await insert(pg.webhooks, snapshot.webhooks);
    await insert(pg.webhookPayloads, snapshot.webhookPayloads);
    await insert(pg.webhookEvents, snapshot.webhookEvents);
    await insert(pg.webhookDeliveries, snapshot.webhookDeliveries);
    await insert(pg.webhookAttempts, snapshot.webhookAttempts);
    await insert(pg.knowledgeBases, snapshot.knowledgeBases);
    await insert(pg.kbDocuments, snapshot.kbDocuments);
    await insert(pg.kbChunks, snapshot.kbChunks);
    // Messages kept their sequence numbers: later ones must follow them.
    await tx.execute(
      sql`SELECT setval(pg_get_serial_sequence('messages', 'seq'), coalesce((SELECT max(seq) FROM messages), 0) + 1, false)`,
    );
  });
};

/** Writes a snapshot into an empty store, in one transaction; a non-empty one is a conflict. */
export const importAll = async (
  store: SqliteStore | PostgresStore,
  snapshot: StoreSnapshot,
): Promise<void> => (isSqlite(store) ? importSqlite(store, snapshot) : importPostgres(store, snapshot));
