import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { subscribeToThread } from "@promptrun/client";
import type { StreamEnvelope } from "@promptrun/contract";
import { startPromptrun, type TestPromptrun } from "@promptrun/testing";
import { readExampleEnv } from "./env.ts";
import { type ExampleServer, startExampleServer } from "./example-server.ts";
import { loadChatPrompt } from "./test-support/chat-prompt.ts";

let promptrun: TestPromptrun;
let example: ExampleServer;

beforeAll(async () => {
  promptrun = await startPromptrun({ prompts: [await loadChatPrompt()] });
  example = startExampleServer({ promptrunUrl: promptrun.url, apiKey: promptrun.apiKey });
});
afterAll(async () => {
  await example.stop();
  await promptrun.stop();
});

const post = (path: string, body: unknown) =>
  fetch(`${example.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("example backend", () => {
  test("serves the chat page", async () => {
    const response = await fetch(example.url);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("<title>Promptrun · Example chat</title>");
    expect(html).toContain('<div id="root"></div>');
  });

  test("token + relayed stream + chat: the answer streams in over the example's own origin", async () => {
    promptrun.script.reply("Hi from the scripted model", { tokenDelayMs: 10 });
    const thread = crypto.randomUUID();
    const tokenResponse = await post("/api/token", { thread });
    expect(tokenResponse.status).toBe(200);
    const token = (await tokenResponse.json()) as { token: string; url: string };
    expect(token.url).toBe(`/api/stream/${thread}`);
    expect(JSON.stringify(token)).not.toContain(promptrun.apiKey);

    const events: StreamEnvelope[] = [];
    let runId = "";
    for await (const event of subscribeToThread({ url: `${example.url}${token.url}`, token: token.token })) {
      events.push(event);
      if (event.type === "ready") {
        const created = await post("/api/chat", { thread, message: "hello" });
        expect(created.status).toBe(202);
        runId = ((await created.json()) as { id: string }).id;
      }
      if (event.type === "run.completed") break;
    }
    expect(events.filter((event) => event.type === "run.token").length).toBe(5);
    const run = (await (await fetch(`${example.url}/api/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(run).toMatchObject({ status: "completed", output: "Hi from the scripted model", channel: "chat" });
    expect(run.prompt).toMatchObject({ slug: "chat" });
    promptrun.script.reset();
  });

  test("rejects bad requests with a message, and passes Promptrun's errors through", async () => {
    const empty = await post("/api/chat", { thread: crypto.randomUUID(), message: "   " });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: "message is empty" });
    expect((await post("/api/token", { thread: "not-a-uuid" })).status).toBe(400);
    const unknownRun = await fetch(`${example.url}/api/runs/${crypto.randomUUID()}`);
    expect(unknownRun.status).toBe(404);
    expect(((await unknownRun.json()) as { error: string }).error).toBeString();
    const stream = await fetch(`${example.url}/api/stream/${crypto.randomUUID()}`);
    expect(stream.status).toBe(401);
  });

  test("tool outputs: bad bodies are refused here; Promptrun's errors pass through", async () => {
    const empty = await post(`/api/runs/${crypto.randomUUID()}/tool-outputs`, { toolOutputs: [] });
    expect(empty.status).toBe(400);
    const unknown = await post(`/api/runs/${crypto.randomUUID()}/tool-outputs`, {
      toolOutputs: [{ toolCallId: "call_1", output: "x" }],
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toContain("not found");
  });

  test("an unreachable Promptrun is a 502 with a plain message", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const deadUrl = `http://127.0.0.1:${closed.port}`;
    await closed.stop(true);
    const orphan = startExampleServer({ promptrunUrl: deadUrl, apiKey: "pr_x" });
    try {
      const response = await fetch(`${orphan.url}/api/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ thread: crypto.randomUUID() }),
      });
      expect(response.status).toBe(502);
      expect(await response.json()).toEqual({ error: "Promptrun is unreachable" });
    } finally {
      await orphan.stop();
    }
  });
});

describe("readExampleEnv", () => {
  test("needs the API key and names the variable", () => {
    expect(() => readExampleEnv({})).toThrow("PROMPTRUN_API_KEY");
    expect(() => readExampleEnv({ PROMPTRUN_API_KEY: "k", EXAMPLE_PORT: "abc" })).toThrow("EXAMPLE_PORT");
    expect(readExampleEnv({ PROMPTRUN_API_KEY: "k" })).toMatchObject({
      promptrunUrl: "http://127.0.0.1:3000",
      port: 3001,
      prompt: { slug: "chat", version: "latest" },
    });
  });
});
