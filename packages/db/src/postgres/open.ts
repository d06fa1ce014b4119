import type { Clock, Store } from "@promptrun/core";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import { createChangeFeed } from "./change-feed.ts";
import { createConsoleSessionStore } from "./console-session-store.ts";
import { createEnvironmentStore } from "./environment-store.ts";
import { createGroupCommit } from "./group-commit.ts";
import { insertRuns, type RunInsert } from "./insert-runs.ts";
import { createKnowledgeStore } from "./knowledge-store.ts";
import { applyPostgresMigrations } from "./migrate.ts";
import type { PostgresContext, PostgresDatabase } from "./postgres-context.ts";
import { createPromptStore } from "./prompt-store.ts";
import { createRunStore } from "./run-store.ts";
import { createTenantStore } from "./tenant-store.ts";
import { createWebhookStore } from "./webhook-store.ts";
import { createWorkflowStore } from "./workflow-store.ts";

export interface OpenPostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (or `postgresql://`). */
  url: string;
  clock?: Clock;
  /** Pool size (default 10). */
  maxConnections?: number;
  /** Most creates committed in one group commit (default 256). */
  maxBatch?: number;
  /** Group commits in flight at once, each on its own pooled connection (default 4). */
  maxConcurrentBatches?: number;
  /**
   * How long a cached API key, `latest`/tag resolution or environment is trusted when another
   * instance's change announcement (NOTIFY) was lost (default 2000 ms; at most 5000).
   */
  cacheTtlMs?: number;
  /** Called after each committed batch of creates with its size (tests and measurements). */
  onCreateBatch?: (size: number) => void;
}

export interface PostgresStore extends Store {
  /** The drizzle database over the pool, for tests and the CLI. */
  db: PostgresDatabase;
  /** The postgres.js pool. */
  client: Sql;
}

const systemClock: Clock = { now: () => new Date() };

const DEFAULT_CACHE_TTL_MS = 2_000;
/** The bound docs/SECURITY.md promises for a revoked key on another instance. */
const MAX_CACHE_TTL_MS = 5_000;

/**
 * Connects to Postgres (postgres.js pool), applies the pending migrations under an advisory lock
 * and returns the stores over the pool.
 */
export const openPostgresStore = async (options: OpenPostgresStoreOptions): Promise<PostgresStore> => {
  const settings = await applyPostgresMigrations(options.url);
  const client = postgres(options.url, {
    max: options.maxConnections ?? 10,
    onnotice: () => {},
    // A run is acknowledged (202) only once its commit is durable: never with the server's `off`.
    ...(settings.synchronousCommit === "off" ? { connection: { synchronous_commit: "on" } } : {}),
  });
  const db = drizzle({ client });
  const changes = createChangeFeed(client);
  try {
    await changes.listen();
  } catch (error) {
    await client.end({ timeout: 5 });
    throw error;
  }
  const context: PostgresContext = {
    db,
    clock: options.clock ?? systemClock,
    changes,
    cacheTtlMs: Math.min(Math.max(options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS, 0), MAX_CACHE_TTL_MS),
  };
  const creates = createGroupCommit<RunInsert, undefined>({
    commit: (batch) => insertRuns(db, batch),
    ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
    ...(options.maxConcurrentBatches === undefined ? {} : { maxInFlight: options.maxConcurrentBatches }),
    ...(options.onCreateBatch === undefined ? {} : { onCommit: options.onCreateBatch }),
  });
  let closing: Promise<void> | null = null;
  return {
    db,
    client,
    tenants: createTenantStore(context),
    prompts: createPromptStore(context),
    runs: createRunStore(context, { creates }),
    environments: createEnvironmentStore(context),
    webhooks: createWebhookStore(context),
    consoleSessions: createConsoleSessionStore(context),
    knowledge: createKnowledgeStore(context),
    workflows: createWorkflowStore(context),
    close() {
      closing ??= (async () => {
        await creates.close();
        await changes.close();
        await client.end({ timeout: 5 });
      })();
      return closing;
    },
  };
};
