/**
 * The ceiling: a bare Bun.serve JSON hello-world, in its own process like the server under test.
 * Two floors beside it, for what any create endpoint must do at least:
 * - `POST /post`: reads the JSON body, answers 202 with a JSON body and a Location header;
 * - `POST /insert`: the same, after inserting a run-sized row (UUIDv7 key, three indexes) into
 *   SQLite (WAL, synchronous=FULL), the inserts of one event-loop turn sharing one commit.
 * Prints {"type":"ready","url"} when listening; stops on SIGTERM.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emit } from "../child-protocol.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

const directory = mkdtempSync(join(tmpdir(), "bench-floor-"));
const database = new Database(join(directory, "floor.db"));
database.exec("PRAGMA journal_mode = WAL");
database.exec("PRAGMA synchronous = FULL");
database.exec(`CREATE TABLE runs (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, thread_id TEXT NOT NULL,
  status TEXT NOT NULL, inputs TEXT NOT NULL, created_at INTEGER NOT NULL)`);
database.exec("CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at, id)");
database.exec("CREATE INDEX runs_tenant_thread ON runs (tenant_id, thread_id, created_at, id)");
database.exec("CREATE INDEX runs_pending ON runs (tenant_id, created_at) WHERE status = 'pending'");
const insert = database.prepare(
  "INSERT INTO runs (id, tenant_id, thread_id, status, inputs, created_at) VALUES (?, 'tenant', ?, 'pending', ?, ?)",
);

/** Inserts queued in one turn, committed together at its end. */
let batch: Array<{ row: [string, string, string, number]; done: () => void }> = [];
const commitBatch = database.transaction((rows: typeof batch) => {
  for (const { row } of rows) insert.run(...row);
});
const flush = () => {
  const rows = batch;
  batch = [];
  commitBatch.immediate(rows);
  for (const { done } of rows) done();
};

const accepted = (id: string) =>
  Response.json({ id, thread: id }, { status: 202, headers: { location: `/api/v1/promptruns/${id}` } });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const path = request.url.slice(request.url.indexOf("/", 8));
    if (request.method !== "POST") return Response.json({ hello: "world" });
    const body = (await request.json()) as { inputs?: unknown };
    const id = Bun.randomUUIDv7();
    if (path !== "/insert") return accepted(id);
    const { promise, resolve } = Promise.withResolvers<void>();
    if (batch.length === 0) setImmediate(flush);
    batch.push({
      row: [id, Bun.randomUUIDv7(), JSON.stringify(body.inputs ?? {}), Date.now()],
      done: resolve,
    });
    await promise;
    return accepted(id);
  },
});
emit({ type: "ready", url: `http://127.0.0.1:${server.port}`, pid: process.pid });
process.on("SIGTERM", () => {
  server.stop(true);
  database.close();
  rmSync(directory, { recursive: true, force: true });
  exitProcess(0);
});
