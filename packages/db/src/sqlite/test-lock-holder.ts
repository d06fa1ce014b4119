/**
 * Child process of server-lock.test.ts: takes the server lock of a database, says so on stdout,
 * and holds it until killed. Usage: bun test-lock-holder.ts <database path>
 */
import { writeSync } from "node:fs";
import { acquireServerLock } from "./server-lock.ts";

const [path] = process.argv.slice(2);
if (!path) throw new Error("usage: <database path>");
acquireServerLock(`file:${path}`);
writeSync(1, "locked\n");
setInterval(() => {}, 60_000);
