import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createGroupCommit } from "./group-commit.ts";
import { createTempDirectory, type TempDirectory } from "./test-fixtures.ts";

describe("createGroupCommit", () => {
  let directory: TempDirectory;
  let raw: Database;
  let commits: number[];

  beforeEach(() => {
    directory = createTempDirectory();
    raw = new Database(join(directory.path, "group.db"), { create: true, strict: true });
    raw.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
    raw.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)");
    commits = [];
  });
  afterEach(() => {
    raw.close();
    directory.remove();
  });

  const insert = (label: string) => () =>
    raw.query<{ id: number }, [string]>("INSERT INTO items (label) VALUES (?) RETURNING id").get(label)?.id;
  const labels = () =>
    raw
      .query<{ label: string }, []>("SELECT label FROM items ORDER BY id")
      .all()
      .map((row) => row.label);

  test("writes submitted in one turn share one commit, in submission order", async () => {
    const group = createGroupCommit(raw, { onCommit: (size) => commits.push(size) });
    const ids = await Promise.all(["a", "b", "c", "d"].map((label) => group.submit(insert(label))));
    expect(commits).toEqual([4]);
    expect(ids).toEqual([1, 2, 3, 4]);
    expect(labels()).toEqual(["a", "b", "c", "d"]);
  });

  test("writes wait for the end of the turn, then are visible", async () => {
    const group = createGroupCommit(raw, { onCommit: (size) => commits.push(size) });
    const written = group.submit(insert("later"));
    expect(labels()).toEqual([]);
    await written;
    expect(labels()).toEqual(["later"]);
  });

  test("a full batch commits at once and the rest follows", async () => {
    const group = createGroupCommit(raw, { maxBatch: 256, onCommit: (size) => commits.push(size) });
    const writes = Array.from({ length: 600 }, (_, index) => group.submit(insert(`item-${index}`)));
    await Promise.all(writes);
    expect(commits).toEqual([256, 256, 88]);
    expect(labels()).toHaveLength(600);
  });

  test("a write that throws is rolled back alone and rejects alone", async () => {
    const group = createGroupCommit(raw, { onCommit: (size) => commits.push(size) });
    const first = group.submit(insert("first"));
    const broken = group.submit(() => {
      insert("half-done")();
      insert("first")(); // UNIQUE violation: its earlier insert must not survive
    });
    const last = group.submit(insert("last"));
    const settled = await Promise.allSettled([first, broken, last]);
    expect(settled.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(commits).toEqual([3]);
    expect(labels()).toEqual(["first", "last"]);
  });

  test("a failing COMMIT rejects every write of the batch and keeps none", async () => {
    raw.exec(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, item_id INTEGER REFERENCES items(id) DEFERRABLE INITIALLY DEFERRED)",
    );
    const group = createGroupCommit(raw, { onCommit: (size) => commits.push(size) });
    const good = group.submit(insert("good"));
    // A deferred foreign-key violation only surfaces at COMMIT.
    const dangling = group.submit(() => raw.run("INSERT INTO notes (item_id) VALUES (999)"));
    const settled = await Promise.allSettled([good, dangling]);
    expect(settled.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(commits).toEqual([]);
    expect(labels()).toEqual([]);
    expect(raw.inTransaction).toBe(false);
  });

  test("close commits what is queued and refuses later writes", async () => {
    const group = createGroupCommit(raw, { onCommit: (size) => commits.push(size) });
    const queued = group.submit(insert("queued"));
    group.close();
    expect(labels()).toEqual(["queued"]);
    await queued;
    await expect(group.submit(insert("too late"))).rejects.toMatchObject({ code: "unavailable" });
    expect(labels()).toEqual(["queued"]);
  });
});
