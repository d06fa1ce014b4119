/**
 * Child process of knowledge-store.test.ts: claims documents of a database until none is left,
 * printing each claimed id on its own line. Usage: bun test-knowledge-claimer.ts <path> <owner>
 */
import { writeSync } from "node:fs";
import { openSqliteStore } from "./open.ts";

const [path, owner] = process.argv.slice(2);
if (!path || !owner) throw new Error("usage: <database path> <owner>");
const store = await openSqliteStore({ url: `file:${path}` });
const now = new Date(1_700_000_050_000);
const leaseUntil = new Date(1_700_000_100_000);
for (;;) {
  const claimed = await store.knowledge.claimDocument(owner, leaseUntil, now);
  if (!claimed) break;
  writeSync(1, `${claimed.document.id}\n`);
}
await store.close();
