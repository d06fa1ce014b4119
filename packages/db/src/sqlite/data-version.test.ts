import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { join } from "node:path";
import { createDataVersionProbe } from "./data-version.ts";
import { createTempDirectory, nextTurn, type TempDirectory } from "./test-fixtures.ts";

let directory: TempDirectory;
let mine: Database;
let other: Database;
beforeEach(() => {
  directory = createTempDirectory();
  const file = join(directory.path, "probe.db");
  mine = new Database(file);
  mine.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER)");
  other = new Database(file);
});
afterEach(() => {
  mine.close();
  other.close();
  directory.remove();
});

test("reads the data version once per turn; another connection's commit shows from the next turn", async () => {
  const probe = createDataVersionProbe(mine);
  const first = probe();
  other.exec("INSERT INTO t VALUES (1)");
  expect(probe()).toBe(first);
  await nextTurn();
  const afterOther = probe();
  expect(afterOther).not.toBe(first);
  // The connection's own commits never change it (its caches clear themselves on their own writes).
  mine.exec("INSERT INTO t VALUES (2)");
  await nextTurn();
  expect(probe()).toBe(afterOther);
});
