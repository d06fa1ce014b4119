import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { PromptrunError } from "@promptrun/core";
import { databasePath, MEMORY_PATH } from "./database-path.ts";
import { isBusy } from "./sqlite-errors.ts";

/**
 * Why a lock held by SQLite on a side file, rather than a heartbeat row or flock through FFI:
 * the operating system drops it the moment the holder dies (SIGKILL, crash, reboot), so no stale
 * lock ever needs judging by age or pid; it is the same POSIX/Windows lock SQLite already relies
 * on for the database itself (so it works wherever the database does: glibc, musl, macOS, a
 * Docker volume), it needs no FFI and no schema, and it never touches the database, so CLI
 * commands keep reading and writing beside a running server.
 */

/** Who holds the lock, as it wrote itself down beside it (for the refusal message). */
export interface ServerLockHolder {
  pid: number;
  hostname: string;
  since: string;
}

export interface ServerLock {
  /** The database file the lock guards, or `:memory:`. */
  readonly databasePath: string;
  /** Gives the lock back (idempotent); a dead process gives it back without calling this. */
  release(): void;
}

export const serverLockPaths = (path: string) => ({
  lock: `${path}-server.lock`,
  holder: `${path}-server.json`,
});

const readHolder = (holderPath: string): ServerLockHolder | null => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(holderPath, "utf8"));
    if (typeof parsed !== "object" || parsed === null) return null;
    const { pid, hostname: host, since } = parsed as Record<string, unknown>;
    if (typeof pid !== "number" || typeof host !== "string" || typeof since !== "string") return null;
    return { pid, hostname: host, since };
  } catch {
    // The holder may be between taking the lock and writing this file.
    return null;
  }
};

const describeHolder = (holder: ServerLockHolder | null): string => {
  if (!holder) return "pid unknown";
  const where = holder.hostname === hostname() ? "" : ` on ${holder.hostname}`;
  return `pid ${holder.pid}${where}, since ${holder.since}`;
};

/**
 * Takes the one-server-per-file lock of a SQLite `DATABASE_URL` for as long as this process
 * serves it, or throws a `conflict` PromptrunError naming the live holder. `:memory:` needs none.
 */
export const acquireServerLock = (databaseUrl: string, now: () => Date = () => new Date()): ServerLock => {
  const path = databasePath(databaseUrl);
  if (path === MEMORY_PATH) return { databasePath: path, release: () => {} };
  const paths = serverLockPaths(path);
  mkdirSync(dirname(path), { recursive: true });
  const lock = new Database(paths.lock, { create: true, readwrite: true });
  try {
    // Fail at once instead of queueing behind the holder; EXCLUSIVE locking mode keeps the lock
    // taken by the first write transaction until the connection closes. Memory journal: no
    // journal file beside it.
    lock.exec("PRAGMA busy_timeout = 0");
    lock.exec("PRAGMA locking_mode = EXCLUSIVE");
    lock.exec("PRAGMA journal_mode = MEMORY");
    lock.exec("BEGIN EXCLUSIVE");
    lock.exec("COMMIT");
  } catch (error) {
    lock.close();
    if (!isBusy(error)) throw error;
    throw new PromptrunError(
      "conflict",
      `another Promptrun server is using ${path} (${describeHolder(readHolder(paths.holder))}); use Postgres for several instances`,
      { cause: error },
    );
  }
  const holder: ServerLockHolder = { pid: process.pid, hostname: hostname(), since: now().toISOString() };
  const temporary = `${paths.holder}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(holder)}\n`);
  renameSync(temporary, paths.holder);
  let released = false;
  return {
    databasePath: path,
    release() {
      if (released) return;
      released = true;
      // The lock file itself stays: deleting it while another process opens it would let two
      // processes lock two different files under one name.
      if (readHolder(paths.holder)?.pid === process.pid) rmSync(paths.holder, { force: true });
      lock.close();
    },
  };
};
