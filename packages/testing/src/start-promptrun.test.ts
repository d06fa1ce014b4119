import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PromptrunClient } from "@promptrun/client";
import type { StreamEnvelope } from "@promptrun/contract";
import type { TestPromptrun } from "./start-promptrun.ts";
import { startTestPromptrun } from "./test-support/start-test-promptrun.ts";

let promptrun: TestPromptrun;
let client: PromptrunClient;

beforeAll(async () => {
  ({ promptrun, client } = await startTestPromptrun({
    morePrompts: [
      {
        slug: "contact",
        inputs: { text: { type: "string" } },
        messages: [{ role: "user", content: "Extract the contact: {{text}}" }],
        output: {
          format: "json_schema",
          name: "contact",
          strict: true,
          schema: {
            type: "object",
            properties: { name: { type: "string" }, topics: { type: "array", items: { type: "string" } } },
            required: ["name", "topics"],
            additionalProperties: false,
          },
        },
      },
    ],
  }));
});
afterAll(() => promptrun.stop());

/** Subscribes to `thread`, starts a run once the stream is live, and collects events until it ends. */
async function runAndCollect(thread: string, message: string, channel?: string) {
  const events: StreamEnvelope[] = [];
  let runId = "";
  for await (const event of client.threads.subscribe(thread)) {
    events.push(event);
    if (event.type === "ready") {
      runId = (await client.runs.create("chat", "latest", { inputs: { message }, thread, channel })).id;
    }
    if ((event.type === "run.completed" || event.type === "run.failed") && event.data.runId === runId) break;
  }
  return { events, runId };
}

describe("startPromptrun", () => {
  test("echoes by default, with token usage and a non-zero cost", async () => {
    promptrun.script.echo();
    const { id } = await client.runs.create("chat", "latest", { inputs: { message: "hello test kit" } });
    const run = await client.runs.wait(id, { intervalMs: 20, timeoutMs: 10_000 });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("hello test kit");
    expect(run.tokenUsage).toMatchObject({ input: 10, output: 3, total: 13 });
    expect(run.cost?.total).toBeGreaterThan(0);
    expect(run.cost?.success.priced).not.toBe(false);
  });

  test("a scripted reply streams token by token before the run completes", async () => {
    promptrun.script.reply("one two three", { tokenDelayMs: 30 });
    const { events } = await runAndCollect(crypto.randomUUID(), "anything");
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === "run.token").length).toBe(3);
    expect(types.indexOf("run.token")).toBeLessThan(types.indexOf("run.completed"));
    const completed = events.find((event) => event.type === "run.completed");
    expect(completed?.type === "run.completed" && completed.data.output).toBe("one two three");
  });

  test("replyJson answers a prompt with an output schema: the run's outputJson is set", async () => {
    const contact = { name: "Ada Lovelace", topics: ["engines", "poetry"] };
    promptrun.script.replyJson(contact, { tokenDelayMs: 5 });
    try {
      const { id } = await client.runs.create("contact", "latest", { inputs: { text: "Ada, engines" } });
      const run = await client.runs.wait<typeof contact>(id, { intervalMs: 20, timeoutMs: 10_000 });
      expect(run).toMatchObject({ status: "completed", finishReason: "stop", phase: null });
      expect(run.output).toBe(JSON.stringify(contact));
      expect(run.outputJson).toEqual(contact);
    } finally {
      promptrun.script.reset();
    }
  });

  test("replyJson streams the JSON in several tokens", async () => {
    promptrun.script.replyJson({ a: 1, b: [2, 3] });
    try {
      const { events } = await runAndCollect(crypto.randomUUID(), "anything");
      const deltas = events.flatMap((event) => (event.type === "run.token" ? [event.data.delta] : []));
      expect(deltas).toEqual(['{"a":1,', '"b":[2,', "3]}"]);
    } finally {
      promptrun.script.reset();
    }
  });

  test("a transient failure (a cut stream) is retried and the run still completes", async () => {
    promptrun.script.echo();
    promptrun.script.queue({ type: "stream", tokens: ["partial ", "answer"], cutAfterTokens: 1 });
    const before = promptrun.script.requests.length;
    const { events, runId } = await runAndCollect(crypto.randomUUID(), "second try");
    expect(promptrun.script.requests.length - before).toBe(2);
    const run = await client.runs.get(runId);
    expect(run).toMatchObject({ status: "completed", output: "second try", attempts: 2 });
    const completed = events.at(-1);
    expect(completed?.type === "run.completed" && completed.data.output).toBe("second try");
  });

  test("a non-retryable model error fails the run with a message", async () => {
    promptrun.script.fail(400, { message: "bad request to the model" });
    const { id } = await client.runs.create("chat", "latest", { inputs: { message: "x" } });
    const run = await client.runs.wait(id, { intervalMs: 20, timeoutMs: 10_000 });
    expect(run.status).toBe("failed");
    expect(run.error).toBeString();
    expect(run.output).toBeNull();
  });

  test("runs on one thread and channel see the earlier exchange (the model receives it)", async () => {
    promptrun.script.echo();
    const thread = crypto.randomUUID();
    await runAndCollect(thread, "my name is Ada", "c");
    const before = promptrun.script.requests.length;
    await runAndCollect(thread, "what is my name?", "c");
    const body = promptrun.script.requests[before]?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    const contents = body.messages.map((message) => `${message.role}:${String(message.content)}`);
    expect(contents).toEqual([
      "system:Be brief.",
      "user:my name is Ada",
      "assistant:my name is Ada",
      "user:what is my name?",
    ]);
  });
});
