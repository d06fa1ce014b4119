/**
 * @promptrun/client against a real in-process Promptrun (the real engine and HTTP API on
 * 127.0.0.1, a scripted model at the wire level), so a client/server mismatch fails a test and
 * not only in apps. (The client's own tests use its fake server; they live there because this
 * package already depends on the client, and the workspace graph must stay acyclic.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError, createPromptrunClient, type PromptrunClient } from "@promptrun/client";
import type { StreamEnvelope } from "@promptrun/contract";
import type { TestPromptrun } from "./start-promptrun.ts";
import { startTestPromptrun } from "./test-support/start-test-promptrun.ts";

let promptrun: TestPromptrun;
let client: PromptrunClient;

beforeAll(async () => {
  ({ promptrun, client } = await startTestPromptrun({ trailingSlash: true }));
});
afterAll(() => promptrun.stop());

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (ApiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("the client against a real Promptrun", () => {
  test("runs.create, then runs.wait: the real run's fields parse", async () => {
    promptrun.script.reply("Hello there");
    const created = await client.runs.create("chat", "latest", { inputs: { message: "hi" }, channel: "c1" });
    const run = await client.runs.wait(created.id, { intervalMs: 20, timeoutMs: 30_000 });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("Hello there");
    expect(run.thread).toBe(created.thread);
    expect(run.channel).toBe("c1");
    expect(run.tokenUsage?.output).toBeGreaterThan(0);
    expect(run.cost?.total).toBeGreaterThan(0);
  });

  test("the server's errors become ApiError values with its status, code and message", async () => {
    const missingInput = await rejection(client.runs.create("chat", "latest", { inputs: {} }));
    expect(missingInput.status).toBe(400);
    expect(missingInput.message).toContain("message");
    const unknownPrompt = await rejection(client.runs.create("no-such-prompt", "latest", { inputs: {} }));
    expect(unknownPrompt.status).toBe(404);
    const unknownRun = await rejection(client.runs.get("00000000-0000-7000-8000-000000000000"));
    expect(unknownRun.status).toBe(404);
    const badKey = createPromptrunClient({ baseUrl: promptrun.url, apiKey: "pr_wrong" });
    expect((await rejection(badKey.runs.create("chat", "latest", { inputs: { message: "x" } }))).status).toBe(
      401,
    );
  });

  test("cancelling an ended run is a conflict", async () => {
    promptrun.script.reply("done");
    const created = await client.runs.create("chat", "latest", { inputs: { message: "hi" } });
    await client.runs.wait(created.id, { intervalMs: 20 });
    const error = await rejection(client.runs.cancel(created.id));
    expect(error.status).toBe(409);
    expect(error.code).toBe("conflict");
  });

  test("an idempotency key returns the first run", async () => {
    const key = crypto.randomUUID();
    const first = await client.runs.create(
      "chat",
      "latest",
      { inputs: { message: "once" } },
      { idempotencyKey: key },
    );
    const again = await client.runs.create(
      "chat",
      "latest",
      { inputs: { message: "once" } },
      { idempotencyKey: key },
    );
    expect(again.id).toBe(first.id);
  });

  test("threads.subscribe streams a run's tokens live, then its completion", async () => {
    promptrun.script.reply("one two three", { tokenDelayMs: 20 });
    const thread = crypto.randomUUID();
    const events: StreamEnvelope[] = [];
    for await (const event of client.threads.subscribe(thread)) {
      events.push(event);
      if (event.type === "ready")
        await client.runs.create("chat", "latest", { inputs: { message: "go" }, thread });
      if (event.type === "run.completed" || event.type === "run.failed") break;
    }
    const tokens = events.flatMap((event) => (event.type === "run.token" ? [event.data.delta] : []));
    expect(tokens.join("")).toBe("one two three");
    expect(events.at(-1)?.type).toBe("run.completed");
    // Run events carry their SSE id (what a reconnect resumes after); `ready` has none on a fresh stream.
    expect(events.filter((event) => event.type !== "ready").every((event) => event.id.length > 0)).toBe(true);
  });
});
