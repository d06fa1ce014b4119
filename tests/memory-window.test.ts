/**
 * The memory window over REST (docs/PRODUCT-RULES.md "Thread memory"): 300 turns on one thread
 * with a prompt whose `memory: {maxMessages: 20}`, each run created after the previous one ended;
 * every run completes and its `memory` says how many history messages it carried and left out.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

const TURNS = 300;
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
  const directory = `${server.dataDir}/memory-window-prompts`;
  mkdirSync(directory, { recursive: true });
  await Bun.write(
    `${directory}/windowed.yaml`,
    [
      "slug: windowed-chat",
      "model: dev:echo",
      "memory: { maxMessages: 20 }",
      "inputs: { message: { type: string } }",
      "messages:",
      '  - { role: system, content: "Be brief." }',
      '  - { role: user, content: "{{message}}" }',
      "",
    ].join("\n"),
  );
  const pushed = await server.cli("prompts", "push", directory, "--tenant", server.tenantId);
  expect(pushed.code).toBe(0);
});
afterAll(async () => {
  await server?.dispose();
});

test(`${TURNS} turns on one thread: each run reports memory {messages, dropped} of its window`, async () => {
  const thread = crypto.randomUUID();
  const reported: unknown[] = [];
  const expected: unknown[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const response = await api(server, "/api/v1/prompts/windowed-chat/latest/runs", {
      method: "POST",
      json: { thread, inputs: { message: `turn ${turn}` } },
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: `turn ${turn}`, error: null });
    reported.push(run.memory);
    // History before this turn: 2 messages per earlier turn; the window keeps the newest 20.
    const history = 2 * (turn - 1);
    const carried = Math.min(history, 20);
    expected.push({ messages: carried, dropped: history - carried });
  }
  expect(reported).toEqual(expected);
}, 90_000);
