/**
 * Kill the server (SIGKILL) while many runs are queued and executing, restart it on the same
 * database (SQLite file, or Postgres where the restarted instance takes the dead one's leases
 * over): every accepted run completes exactly once, and thread memory holds each exchange once.
 */

import { afterAll, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

let server: TestServer | undefined;
afterAll(async () => {
  await server?.dispose();
});

test("SIGKILL mid-flight: every accepted run finishes exactly once after a restart", async () => {
  server = await startServer({ env: { PROMPTRUN_CONCURRENCY: "4", PROMPTRUN_TENANT_CONCURRENCY: "4" } });
  const accepted: Array<{ id: string; thread: string }> = [];
  const threads = Array.from({ length: 6 }, () => crypto.randomUUID());
  for (let index = 0; index < 60; index++) {
    const response = await api(server, "/api/v1/prompts/chat/latest/runs", {
      method: "POST",
      json: {
        inputs: { message: `message ${index} with several words to stream slowly` },
        thread: threads[index % threads.length],
        channel: index % 2 === 0 ? "default" : "side",
      },
    });
    expect(response.status).toBe(202);
    accepted.push((await response.json()) as { id: string; thread: string });
  }
  // Let some runs finish and others be mid-stream.
  await Bun.sleep(400);
  await server.kill();

  const [pending] = await server.sql<{ n: number | string }>(
    "select count(*) as n from runs where status = 'pending'",
  );
  expect(Number(pending?.n)).toBeGreaterThan(0);

  server = await server.restart();
  for (const { id } of accepted) {
    const run = await waitForRun(server, id, 60_000);
    expect(run.status).toBe("completed");
  }

  const perRun = await server.sql<{ run_id: string; n: number | string }>(
    "select run_id, count(*) as n from messages group by run_id",
  );
  const counts = new Map(perRun.map((row) => [row.run_id, Number(row.n)]));
  for (const { id } of accepted) {
    // One user message and one assistant output per run: nothing duplicated by the re-run.
    expect(counts.get(id)).toBe(2);
  }
}, 120_000);
