/**
 * Child process for storage-faults.test.ts: takes SQLite's write lock on a database (BEGIN
 * IMMEDIATE and a no-op update), prints "locked", holds it for the given milliseconds, commits
 * and prints "released". Usage: bun hold-write-lock.ts <database path> <milliseconds>
 */
import { Database } from "bun:sqlite";

const [path, holdText] = process.argv.slice(2);
if (!path || !holdText) throw new Error("usage: hold-write-lock.ts <database path> <milliseconds>");
const database = new Database(path);
database.exec("PRAGMA busy_timeout = 10000");
database.exec("BEGIN IMMEDIATE");
database.exec("UPDATE tenants SET name = name");
process.stdout.write("locked\n");
await Bun.sleep(Number(holdText));
database.exec("COMMIT");
database.close();
process.stdout.write("released\n");
