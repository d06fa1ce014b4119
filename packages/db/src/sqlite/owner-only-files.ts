import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

const OWNER_ONLY_FILE = 0o600;
const OWNER_ONLY_DIRECTORY = 0o700;

/**
 * The database holds API key hashes, encrypted secrets and every prompt and output: readable by
 * its owner only. SQLite creates the file with the umask's mode (usually 0644) and gives -wal and
 * -shm the mode of the database file, so the file is created here first with 0600; an existing
 * one (and its -wal/-shm) is tightened to 0600 too. A directory created for it is 0700.
 */
export function prepareOwnerOnlyDatabaseFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: OWNER_ONLY_DIRECTORY });
  // "a": creates the file when missing, never truncates one that exists.
  closeSync(openSync(path, "a", OWNER_ONLY_FILE));
  for (const file of [path, `${path}-wal`, `${path}-shm`])
    if (existsSync(file)) chmodSync(file, OWNER_ONLY_FILE);
}
