import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createGroupCommit } from "./group-commit.ts";
import { createTempDirectory, type TempDirectory } from "./test-fixtures.ts";
import { createWalSync, type WalSync } from "./wal-sync.ts";

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

  describe("with the WAL synced off the event loop", () => {
    /** A WalSync whose flushes the test finishes by hand. */
    const manualSync = () => {
      const waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
      let blocking = 0;
      const sync: WalSync = {
        sync: () => new Promise<void>((resolve, reject) => waiting.push({ resolve, reject })),
        syncNow: () => {
          blocking++;
        },
        close: () => {},
      };
      return { sync, waiting, blockingSyncs: () => blocking };
    };
    const settledYet = async (promise: Promise<unknown>) => {
      let settled = false;
      void promise.then(
        () => (settled = true),
        () => (settled = true),
      );
      await Bun.sleep(5);
      return settled;
    };
    const synchronous = () => raw.query<{ synchronous: number }, []>("PRAGMA synchronous").get()?.synchronous;

    test("a committed write resolves only after the WAL sync that follows its COMMIT", async () => {
      const { sync, waiting } = manualSync();
      const group = createGroupCommit(raw, { walSync: sync, onCommit: (size) => commits.push(size) });
      let insideBatch: number | undefined;
      const written = group.submit(() => {
        insideBatch = synchronous();
        return insert("durable")();
      });
      expect(await settledYet(written)).toBe(false);
      // Committed (another connection sees it) but not yet acknowledged.
      const other = new Database(join(directory.path, "group.db"), { readonly: true });
      expect(other.query("SELECT label FROM items").all()).toEqual([{ label: "durable" }]);
      other.close();
      expect(commits).toEqual([1]);
      expect(waiting).toHaveLength(1);
      waiting[0]!.resolve();
      expect(await written).toBe(1);
      // The batch ran with NORMAL (1): its COMMIT did not fsync. The connection's other writes keep FULL (2).
      expect(insideBatch).toBe(1);
      expect(synchronous()).toBe(2);
    });

    test("batches committed while a sync runs share the next one, and settle in commit order", async () => {
      const { sync, waiting } = manualSync();
      const group = createGroupCommit(raw, { walSync: sync, onCommit: (size) => commits.push(size) });
      const order: string[] = [];
      const first = group.submit(insert("first")).then(() => order.push("first"));
      await Bun.sleep(1);
      const second = group.submit(insert("second")).then(() => order.push("second"));
      await Bun.sleep(1);
      const third = group.submit(insert("third")).then(() => order.push("third"));
      await Bun.sleep(1);
      expect(commits).toEqual([1, 1, 1]);
      expect(waiting).toHaveLength(1); // one sync in flight; the later batches wait for the next
      waiting[0]!.resolve();
      await first;
      expect(await settledYet(second)).toBe(false);
      expect(waiting).toHaveLength(2);
      waiting[1]!.resolve();
      await Promise.all([second, third]);
      expect(waiting).toHaveLength(2);
      expect(order).toEqual(["first", "second", "third"]);
    });

    test("a failed sync rejects its writes with unavailable; a write that failed on its own rejects at once", async () => {
      const { sync, waiting } = manualSync();
      const group = createGroupCommit(raw, { walSync: sync });
      const kept = group.submit(insert("kept"));
      const duplicate = group.submit(insert("kept"));
      await expect(duplicate).rejects.toThrow(/UNIQUE/);
      waiting[0]!.reject(new Error("EIO"));
      await expect(kept).rejects.toMatchObject({ code: "unavailable", retryAfterSeconds: 1 });
      // The next write is flushed by a new sync.
      const next = group.submit(insert("next"));
      await Bun.sleep(1);
      waiting[1]!.resolve();
      expect(await next).toBe(2);
    });

    test("close syncs what is still unacknowledged, blocking, and resolves it", async () => {
      const { sync, waiting, blockingSyncs } = manualSync();
      const group = createGroupCommit(raw, { walSync: sync });
      const inFlight = group.submit(insert("in flight"));
      await Bun.sleep(1);
      const queued = group.submit(insert("queued"));
      group.close();
      expect(blockingSyncs()).toBe(1);
      expect(await Promise.all([inFlight, queued])).toEqual([1, 2]);
      waiting[0]!.resolve(); // the async sync ending later changes nothing
      expect(labels()).toEqual(["in flight", "queued"]);
    });

    test("the real WAL sync flushes the WAL, follows a replaced WAL, and syncs the file when there is none", async () => {
      const path = join(directory.path, "group.db");
      const walSync = createWalSync(path);
      const group = createGroupCommit(raw, { walSync });
      expect(await group.submit(insert("on disk"))).toBe(1);
      expect(await Bun.file(`${path}-wal`).exists()).toBe(true);
      walSync.syncNow();
      walSync.close();

      // A database without a WAL (a rollback-journal file, or everything checkpointed and the WAL gone).
      const plainPath = join(directory.path, "plain.db");
      const plain = new Database(plainPath, { create: true });
      plain.exec("CREATE TABLE t (x INTEGER)");
      plain.close();
      const plainSync = createWalSync(plainPath);
      await plainSync.sync();
      // A WAL appearing later is picked up, and replaced again, re-opened (by inode).
      await Bun.write(`${plainPath}-wal`, "frames");
      await plainSync.sync();
      rmSync(`${plainPath}-wal`);
      await Bun.write(`${plainPath}-wal`, "new frames");
      await plainSync.sync();
      plainSync.close();
      // Neither file at all: the sync fails (its writes would reject with unavailable).
      await expect(createWalSync(join(directory.path, "missing.db")).sync()).rejects.toThrow();
    });
  });

  describe("another process holding the write lock", () => {
    const lockFromOtherConnection = () => {
      const other = new Database(join(directory.path, "group.db"));
      other.exec("BEGIN IMMEDIATE");
      other.exec("INSERT INTO items (label) VALUES ('from elsewhere')");
      return () => {
        other.exec("COMMIT");
        other.close();
      };
    };

    test("a locked database is retried without freezing the event loop, and the write lands once it is free", async () => {
      const unlock = lockFromOtherConnection();
      const group = createGroupCommit(raw, {
        busyWaitMs: 20,
        busyRetryDelayMs: 10,
        onCommit: (size) => commits.push(size),
      });
      const order: string[] = [];
      const written = group.submit(insert("waited")).then(() => order.push("write"));
      // Timers keep firing while the write waits: the loop is not blocked by the lock.
      await Bun.sleep(150);
      order.push("timer");
      const joined = group.submit(insert("joined")).then(() => order.push("joined"));
      unlock();
      await Promise.all([written, joined]);
      expect(order).toEqual(["timer", "write", "joined"]);
      expect(labels()).toEqual(["from elsewhere", "waited", "joined"]);
      // The connection's own busy timeout is restored after each attempt.
      expect(raw.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 0 });
    });

    test("past its busy deadline a write rejects with unavailable (a 503 with Retry-After), and nothing is half-written", async () => {
      const unlock = lockFromOtherConnection();
      try {
        const group = createGroupCommit(raw, { busyWaitMs: 10, busyRetryDelayMs: 10, maxBusyWaitMs: 100 });
        const patient = group.submit(insert("patient"), { maxBusyWaitMs: 60_000 });
        const failed = await group.submit(insert("impatient")).catch((error: unknown) => error);
        expect(failed).toMatchObject({ code: "unavailable", retryAfterSeconds: 1 });
        unlock();
        await patient;
        expect(labels()).toEqual(["from elsewhere", "patient"]);
      } finally {
        try {
          unlock();
        } catch {
          // already unlocked
        }
      }
    });

    test("close makes one last attempt and rejects what the lock still holds", async () => {
      const unlock = lockFromOtherConnection();
      const group = createGroupCommit(raw, { busyWaitMs: 10, busyRetryDelayMs: 10 });
      const pending = group.submit(insert("at shutdown"));
      group.close();
      await expect(pending).rejects.toMatchObject({ code: "unavailable" });
      unlock();
      expect(labels()).toEqual(["from elsewhere"]);
    });
  });

  test("a full disk rejects a client's write at once (503) while a patient write waits for space", async () => {
    // max_page_count caps the file: SQLite then fails writes with SQLITE_FULL, as on a full disk.
    const pages = (raw.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    raw.exec(`PRAGMA max_page_count = ${pages}`);
    const group = createGroupCommit(raw, { fullRetryDelayMs: 10, onCommit: (size) => commits.push(size) });
    const filler = "x".repeat(50_000);
    const patient = group.submit(insert(`patient ${filler}`), {
      maxBusyWaitMs: 60_000,
      retryWhenStorageFull: true,
    });
    const refused = await group.submit(insert(`client ${filler}`)).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "unavailable", retryAfterSeconds: 30 });
    expect(String((refused as Error).message)).toContain("full");
    // Space comes back: the patient write lands, exactly once.
    raw.exec(`PRAGMA max_page_count = ${pages * 100}`);
    await patient;
    expect(labels().map((label) => label.slice(0, 7))).toEqual(["patient"]);
  });
});
