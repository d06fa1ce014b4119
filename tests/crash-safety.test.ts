/**
 * Kill the server (SIGKILL) at a known point — a run is mid-stream (its first run.token seen on
 * SSE) while the runs before it on its channel have completed and later ones are queued — then
 * restart it on the same database (SQLite file, or Postgres where the restarted instance takes the
 * dead one's leases over): every accepted run completes exactly once with the right output, runs
 * finished before the kill are not run again, and each channel's memory holds its exchanges once,
 * in creation order.
 */

import { afterAll, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import { SseConnection } from "./support/sse.ts";

let server: TestServer | undefined;
let stream: SseConnection | undefined;
afterAll(async () => {
  stream?.close();
  await server?.dispose();
});

interface Accepted {
  id: string;
  thread: string;
  channel: string;
  message: string;
}

test("SIGKILL mid-stream: every accepted run finishes exactly once, memory in creation order", async () => {
  server = await startServer({ env: { PROMPTRUN_CONCURRENCY: "4", PROMPTRUN_TENANT_CONCURRENCY: "4" } });
  const threads = Array.from({ length: 3 }, () => crypto.randomUUID());
  const watched = threads[0]!;
  const minted = await api(server, `/api/v1/threads/${watched}/stream-token`, { method: "POST" });
  const { token, url } = (await minted.json()) as { token: string; url: string };
  stream = await SseConnection.open(url, { token });
  await stream.waitFor((event) => event.event === "ready");

  // Runs go round-robin over 3 threads and 2 channels: threads[0]'s default channel gets
  // indices 0, 6, 12, …; its third run is the one killed mid-stream.
  const TARGET_INDEX = 12;
  const accepted: Accepted[] = [];
  for (let index = 0; index < 30; index++) {
    const thread = threads[index % threads.length]!;
    const channel = index % 2 === 0 ? "default" : "side";
    // The target streams for ~5 s (150 words, 30 ms each): the kill lands mid-stream even when
    // events reach the test late (through Redis on Postgres).
    const message =
      index === TARGET_INDEX
        ? `message ${index}${" word".repeat(150)}`
        : `message ${index} with several words to stream slowly`;
    const response = await api(server, "/api/v1/prompts/chat/latest/runs", {
      method: "POST",
      json: { inputs: { message }, thread, channel },
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    accepted.push({ id, thread, channel, message });
  }

  // The known point: the third run of the watched thread's default channel is streaming, so the
  // two before it have completed (strict channel order) and the ones after it wait.
  const watchedChannel = accepted.filter((run) => run.thread === watched && run.channel === "default");
  const target = watchedChannel[2]!;
  expect(target.id).toBe(accepted[TARGET_INDEX]!.id);
  await stream.waitFor((event) => event.event === "run.token" && event.data.runId === target.id, 60_000);
  await server.kill();
  stream.close();

  const before = await server.sql<{ id: string; status: string; finished_at: unknown }>(
    "select id, status, finished_at from runs",
  );
  const statusBefore = new Map(before.map((row) => [row.id, row]));
  // The premise: killed mid-stream, with finished runs before the target and pending ones after.
  expect(statusBefore.get(target.id)?.status).toBe("pending");
  for (const earlier of watchedChannel.slice(0, 2))
    expect(statusBefore.get(earlier.id)?.status).toBe("completed");
  expect(statusBefore.get(watchedChannel.at(-1)!.id)?.status).toBe("pending");
  const finishedBefore = before.filter((row) => row.status === "completed");

  server = await server.restart();
  for (const run of accepted) {
    const finished = await waitForRun(server, run.id, 60_000);
    // dev:echo streams back the user message: the output is exactly it, once.
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
  const rows = await server.sql<{
    thread_id: string;
    channel: string;
    run_id: string;
    role: string;
    content: string;
  }>("select thread_id, channel, run_id, role, content from messages order by seq");
  for (const thread of threads)
    for (const channel of ["default", "side"]) {
      const stored = rows
        .filter((row) => row.thread_id === thread && row.channel === channel)
        .map((row) => `${row.run_id} ${row.role}: ${row.content}`);
      const expected = accepted
        .filter((run) => run.thread === thread && run.channel === channel)
        .flatMap((run) => [`${run.id} user: ${run.message}`, `${run.id} assistant: ${run.message}`]);
      expect(stored).toEqual(expected);
    }
}, 180_000);
