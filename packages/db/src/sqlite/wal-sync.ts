import { closeSync, fstatSync, fsync, fsyncSync, openSync, statSync } from "node:fs";

/**
 * Makes what a connection committed with `synchronous = NORMAL` durable: one `fsync` of the WAL
 * file, run on Bun's file-system thread pool so the event loop keeps serving requests while the
 * disk flushes (docs/ARCHITECTURE.md "Durable commits off the event loop").
 *
 * In WAL mode, `synchronous = FULL` differs from `NORMAL` only by that fsync of the WAL at each
 * commit; a checkpoint syncs the WAL and the database file in both modes, and the WAL header when
 * the file is reused. Linux's fsync flushes the file (the inode), whichever descriptor asks, so
 * this descriptor's fsync covers the frames SQLite's connection wrote.
 */
export interface WalSync {
  /** Resolves once everything committed before the call is on disk. */
  sync(): Promise<void>;
  /** The same, blocking (shutdown: nothing may be left waiting). */
  syncNow(): void;
  close(): void;
}

/** `databasePath` is the SQLite file; its WAL is `<path>-wal`, created by SQLite's first write. */
export function createWalSync(databasePath: string): WalSync {
  const walPath = `${databasePath}-wal`;
  let descriptor: { fd: number; inode: number; path: string } | null = null;

  /**
   * The descriptor of the file that holds the commits now: the WAL, re-opened if SQLite replaced
   * it; the database file itself when no WAL exists (everything was checkpointed into it).
   */
  const current = (): number => {
    let path = walPath;
    let inode: number;
    try {
      inode = statSync(walPath).ino;
    } catch {
      path = databasePath;
      inode = statSync(databasePath).ino;
    }
    if (descriptor && descriptor.inode === inode && descriptor.path === path) return descriptor.fd;
    if (descriptor) closeSync(descriptor.fd);
    descriptor = null;
    const fd = openSync(path, "r");
    // The inode of what was opened, not of what the path named a moment before.
    descriptor = { fd, inode: fstatSync(fd).ino, path };
    return fd;
  };

  return {
    sync() {
      return new Promise<void>((resolve, reject) => {
        let fd: number;
        try {
          fd = current();
        } catch (error) {
          reject(error);
          return;
        }
        fsync(fd, (error) => (error ? reject(error) : resolve()));
      });
    },
    syncNow() {
      fsyncSync(current());
    },
    close() {
      if (descriptor) closeSync(descriptor.fd);
      descriptor = null;
    },
  };
}
