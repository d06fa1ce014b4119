/** Helpers for this package's SQLite tests: temp databases (row factories: @promptrun/core/testing). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore, type SqliteStore } from "./open.ts";

export interface TempDirectory {
  path: string;
  remove(): void;
}

export const createTempDirectory = (): TempDirectory => {
  const path = mkdtempSync(join(tmpdir(), "promptrun-db-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
};

/** A store on a fresh file in its own temp directory; `dispose` closes it and removes the files. */
export const openTempStore = async (
  options: Omit<Parameters<typeof openSqliteStore>[0], "url"> = {},
): Promise<{ store: SqliteStore; directory: TempDirectory; dispose(): Promise<void> }> => {
  const directory = createTempDirectory();
  const store = await openSqliteStore({ ...options, url: `file:${join(directory.path, "test.db")}` });
  return {
    store,
    directory,
    async dispose() {
      await store.close();
      directory.remove();
    },
  };
};

/** Resolves on the next event-loop turn (after this turn's setImmediate callbacks). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
