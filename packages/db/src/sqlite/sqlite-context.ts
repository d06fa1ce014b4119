import type { Database } from "bun:sqlite";
import type { Clock } from "@promptrun/core";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";

/** What every SQLite store module is built from: one connection, seen raw and through drizzle. */
export interface SqliteContext {
  db: BunSQLiteDatabase;
  raw: Database;
  clock: Clock;
  /** `PRAGMA data_version`, read at most once per event-loop turn (see data-version.ts). */
  dataVersion: () => number;
}
