/**
 * Child process of server-lock.test.ts: takes the server lock of a database, says so on stdout,
 * and holds it until killed. Usage: bun test-lock-holder.ts <database path>
 */
import { writeSync } from "node:fs";
import { acquireServerLock } from "./server-lock.ts";

const [path] = process.argv.slice(2);
if (!path) throw new Error("usage: <database path>");
const lock = acquireServerLock(`file:${path}`);
writeSync(1, "locked\n");
// Referenced until killed: a collected lock's connection is closed by its finalizer, which frees
// the lock (the test then saw "the lock was granted" under memory pressure).
setInterval(() => lock.databasePath, 60_000);
