/**
 * Crash safety of a backlog deeper than the engine keeps in memory (docs/ARCHITECTURE.md
 * "Pending runs in memory"): with PROMPTRUN_QUEUE_MEMORY_RUNS at its least (64; 16 per tenant
 * and class), 240 runs are accepted over four threads, two channels and all three priorities, so
 * most of them wait in the store only. The server is killed (SIGKILL) while it pages them in and
 * executes them, then restarted on the same database: every accepted run completes exactly once
 * with the right output, runs finished before the kill are not run again, and each channel's
 * memory holds its exchanges once, in creation order. (On Postgres + Redis the instances share
 * the queue through leases instead; the test holds there too.)
 */
import { afterAll, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

let server: TestServer | undefined;
afterAll(async () => {
  await server?.dispose();
});

interface Accepted {
  id: string;
  thread: string;
  channel: string;
  message: string;
}

const RUNS = 240;
const PRIORITIES = ["normal", "low", "normal", "onsite"] as const;

const engineStats = async (current: TestServer) => {
  const health = (await (await fetch(`${current.url}/health`)).json()) as {
    engine?: { queued: Record<string, number>; executing: number; queuedInMemory: number };
  };
  return health.engine;
};

test("SIGKILL while a backlog deeper than memory is paged in: every run completes once, channels in order", async () => {
  const env = {
    PROMPTRUN_CONCURRENCY: "4",
    PROMPTRUN_TENANT_CONCURRENCY: "4",
    PROMPTRUN_QUEUE_MEMORY_RUNS: "64",
    PROMPTRUN_MAX_PENDING_RUNS: "10000",
    PROMPTRUN_RATE_LIMIT: "10000/s,10000",
  };
  server = await startServer({ env });
  const threads = Array.from({ length: 4 }, () => crypto.randomUUID());
  const accepted: Accepted[] = [];
  let mostInMemory = 0;
  for (let index = 0; index < RUNS; index++) {
    const thread = threads[index % threads.length]!;
    const channel = index % 3 === 0 ? "side" : "default";
    const message = `message ${index} streams a few words`;
    const response = await api(server, "/api/v1/prompts/chat/latest/runs", {
      method: "POST",
      json: { inputs: { message }, thread, channel, priority: PRIORITIES[index % PRIORITIES.length] },
    });
    expect(response.status).toBe(202);
    accepted.push({ id: ((await response.json()) as { id: string }).id, thread, channel, message });
    if (index % 20 === 0)
      mostInMemory = Math.max(mostInMemory, (await engineStats(server))?.queuedInMemory ?? 0);
  }
  const stats = await engineStats(server);
  const queued = Object.values(stats?.queued ?? {}).reduce((sum, count) => sum + count, 0);
  // The premise (one instance): most runs wait in the store only, and the depth counts them.
  if (server.dialect === "sqlite") {
    expect(mostInMemory).toBeLessThanOrEqual(64);
    expect(stats?.queuedInMemory).toBeLessThanOrEqual(64);
    expect(queued).toBeGreaterThan(100);
  }

  // Killed once some runs have finished, with most still waiting.
  const countDone = async () =>
    (await server!.sql<{ n: number }>("select count(*) as n from runs where status = 'completed'"))[0]?.n ??
    0;
  const deadline = Date.now() + 60_000;
  while (Number(await countDone()) < 20 && Date.now() < deadline) await Bun.sleep(20);
  await server.kill();

  const before = await server.sql<{ id: string; status: string; finished_at: unknown }>(
    "select id, status, finished_at from runs",
  );
  const finishedBefore = before.filter((row) => row.status === "completed");
  expect(finishedBefore.length).toBeGreaterThanOrEqual(20);
  expect(before.filter((row) => row.status === "pending").length).toBeGreaterThan(100);

  server = await server.restart();
  for (const run of accepted) {
    const finished = await waitForRun(server, run.id, 120_000);
    expect({ id: run.id, status: finished.status, output: finished.output }).toEqual({
      id: run.id,
      status: "completed",
      output: run.message,
    });
  }
  // Runs that had finished before the kill were not run again.
  const after = await server.sql<{ id: string; finished_at: unknown }>("select id, finished_at from runs");
  const finishedAfter = new Map(after.map((row) => [row.id, String(row.finished_at)]));
  for (const row of finishedBefore) expect(finishedAfter.get(row.id)).toBe(String(row.finished_at));

  // Each channel's memory: one user message and one output per run, in creation order.
  const rows = await server.sql<{ thread_id: string; channel: string; run_id: string; role: string }>(
    "select thread_id, channel, run_id, role from messages order by seq",
  );
  for (const thread of threads)
    for (const channel of ["default", "side"]) {
      const stored = rows
        .filter((row) => row.thread_id === thread && row.channel === channel)
        .map((row) => `${row.run_id} ${row.role}`);
      const expected = accepted
        .filter((run) => run.thread === thread && run.channel === channel)
        .flatMap((run) => [`${run.id} user`, `${run.id} assistant`]);
      expect(stored).toEqual(expected);
    }
  expect(await engineStats(server)).toMatchObject({ queued: { onsite: 0, normal: 0, low: 0 }, executing: 0 });
}, 240_000);
