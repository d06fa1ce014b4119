import { type Clock, PromptrunError, type Store } from "@promptrun/core";
import { openPostgresStore } from "./postgres/open.ts";
import { openSqliteStore } from "./sqlite/open.ts";

export interface OpenStoreOptions {
  clock?: Clock;
  /** Postgres pool size (default 10); ignored by SQLite. */
  maxConnections?: number;
}

/** Which store a `DATABASE_URL` names. */
export const storeKindOf = (url: string): "sqlite" | "postgres" => {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return "postgres";
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== "file") {
    throw new PromptrunError(
      "invalid",
      `unsupported database URL scheme ${scheme}:// (use file:<path> or :memory: for SQLite, postgres://… for Postgres)`,
    );
  }
  return "sqlite";
};

/**
 * Opens the store a `DATABASE_URL` names, applying its pending migrations: `file:…` (or a bare
 * path) and `:memory:` → SQLite; `postgres://…` / `postgresql://…` → Postgres.
 */
export const openStore = async (url: string, options: OpenStoreOptions = {}): Promise<Store> => {
  const clock = options.clock === undefined ? {} : { clock: options.clock };
  if (storeKindOf(url) === "postgres") {
    return openPostgresStore({
      url: url.trim(),
      ...clock,
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    });
  }
  return openSqliteStore({ url, ...clock });
};
