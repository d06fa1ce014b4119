import type { Clock } from "@promptrun/core";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import type { ChangeFeed } from "./change-feed.ts";

export type PostgresDatabase = PostgresJsDatabase;

/** An open transaction of PostgresDatabase. */
export type PostgresTransaction = Parameters<Parameters<PostgresDatabase["transaction"]>[0]>[0];

/** A connection pool or an open transaction: both offer the same query builder. */
export type PostgresQueryable = Pick<PostgresDatabase, "select" | "insert" | "update" | "delete" | "execute">;

/** What every Postgres store module is built from: one pool, seen through drizzle. */
export interface PostgresContext {
  db: PostgresDatabase;
  clock: Clock;
  /** Invalidates the read caches (API keys, prompt versions, environments) here and elsewhere. */
  changes: ChangeFeed;
  /** How long a cached mutable lookup is trusted without an announcement. */
  cacheTtlMs: number;
}
