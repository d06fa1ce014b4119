import { PromptrunError } from "@promptrun/core";
import { storeKindOf } from "./open-store.ts";
import { openPostgresStore, type PostgresStore } from "./postgres/open.ts";
import { exportAll, importAll, type StoreSnapshot } from "./postgres/store-snapshot.ts";
import { openSqliteStore, type SqliteStore } from "./sqlite/open.ts";

const openEither = (url: string): Promise<SqliteStore | PostgresStore> =>
  storeKindOf(url) === "postgres"
    ? openPostgresStore({ url: url.trim(), maxConnections: 2 })
    : openSqliteStore({ url });

export type CopyCounts = { [K in keyof StoreSnapshot]: number };

/**
 * `promptrun db copy`: every row of the database at `fromUrl` into the empty one at `toUrl`
 * (both migrated first), in one transaction on the target; ids, timestamps, memory order, API key
 * hashes and encrypted values are kept as they are. Stop the servers using the source first:
 * writes made during the copy are not in it.
 */
export const copyDatabase = async (fromUrl: string, toUrl: string): Promise<CopyCounts> => {
  if (fromUrl.trim() === toUrl.trim())
    throw new PromptrunError("invalid", "--from and --to name the same database");
  const source = await openEither(fromUrl);
  try {
    const target = await openEither(toUrl);
    try {
      const snapshot = await exportAll(source);
      await importAll(target, snapshot);
      return Object.fromEntries(
        Object.entries(snapshot).map(([table, rows]) => [table, rows.length]),
      ) as CopyCounts;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
};
