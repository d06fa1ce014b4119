/**
 * Child process of crash-durability.test.ts: creates runs with many in flight, writes each id to
 * stdout (synchronously) once its create() resolved, and SIGKILLs itself after `killAfter` ids.
 * Usage: bun test-crash-writer.ts <database path> <tenant id> <kill after>
 */

import { writeSync } from "node:fs";
import { newRun } from "@promptrun/core/testing";
import { openSqliteStore } from "./open.ts";

const [path, tenantId, killAfterText] = process.argv.slice(2);
if (!path || !tenantId || !killAfterText) throw new Error("usage: <database path> <tenant id> <kill after>");
const killAfter = Number(killAfterText);

const store = await openSqliteStore({ url: `file:${path}` });
const version = await store.prompts.resolveVersion(tenantId, "greet", { kind: "latest" });
if (!version) throw new Error("seed the prompt first");

let acknowledged = 0;
const createOne = (): void => {
  const run = newRun(version, { encryptedEnvVars: "ciphertext-to-resume-with" });
  store.runs.create(run).then(() => {
    writeSync(1, `${run.id}\n`);
    acknowledged++;
    // Killed while later creates are still queued or mid-commit.
    if (acknowledged === killAfter) process.kill(process.pid, "SIGKILL");
    createOne();
  });
};
for (let inFlight = 0; inFlight < 64; inFlight++) createOne();
