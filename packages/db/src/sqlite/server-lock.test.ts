import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PromptrunError } from "@promptrun/core";
import { openSqliteStore } from "./open.ts";
import { acquireServerLock, serverLockPaths } from "./server-lock.ts";

const directories: string[] = [];
const children: Array<ReturnType<typeof Bun.spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const freshDatabase = () => {
  const directory = mkdtempSync(join(tmpdir(), "promptrun-server-lock-"));
  directories.push(directory);
  return join(directory, "nested", "promptrun.db");
};

const refusal = (url: string): PromptrunError => {
  try {
    acquireServerLock(url).release();
  } catch (error) {
    if (PromptrunError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the lock was granted");
};

/** Starts a process that takes the lock and keeps it until it is killed. */
const holdInChild = async (path: string) => {
  const child = Bun.spawn(["bun", join(import.meta.dir, "test-lock-holder.ts"), path], {
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(child);
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toBe("locked\n");
  return child;
};

describe("acquireServerLock", () => {
  test("a second holder is refused with the first one's pid and start time, until it releases", () => {
    const path = freshDatabase();
    const since = new Date("2026-01-02T03:04:05.000Z");
    const lock = acquireServerLock(`file:${path}`, () => since);
    expect(lock.databasePath).toBe(path);

    const error = refusal(`file:${path}`);
    expect(error.code).toBe("conflict");
    expect(error.message).toBe(
      `another Promptrun server is using ${path} (pid ${process.pid}, since 2026-01-02T03:04:05.000Z); use Postgres for several instances`,
    );

    lock.release();
    lock.release();
    expect(existsSync(serverLockPaths(path).holder)).toBe(false);
    acquireServerLock(`file:${path}`).release();
  });

  test("the database itself stays open to other connections while the lock is held", async () => {
    const path = freshDatabase();
    const lock = acquireServerLock(`file:${path}`);
    try {
      const store = await openSqliteStore({ url: `file:${path}` });
      const id = crypto.randomUUID();
      await store.tenants.create({
        id,
        name: "beside the server",
        subscriptionActive: true,
        createdAt: new Date(),
      });
      expect((await store.tenants.list()).map((tenant) => tenant.id)).toEqual([id]);
      await store.close();
    } finally {
      lock.release();
    }
  });

  test("another process's lock refuses; once it is SIGKILLed the lock is free again", async () => {
    const path = freshDatabase();
    const child = await holdInChild(path);
    expect(refusal(`file:${path}`).message).toContain(`(pid ${child.pid}, since `);

    child.kill("SIGKILL");
    await child.exited;
    // The dead holder's note is still there; the OS lock is not.
    expect(existsSync(serverLockPaths(path).holder)).toBe(true);
    const lock = acquireServerLock(`file:${path}`);
    lock.release();
  });

  test(":memory: needs no lock", () => {
    const first = acquireServerLock(":memory:");
    const second = acquireServerLock(":memory:");
    first.release();
    second.release();
    expect(first.databasePath).toBe(":memory:");
  });
});
