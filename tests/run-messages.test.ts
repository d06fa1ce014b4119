/**
 * GET /api/v1/promptruns/{id}/messages end to end (real server, SQLite or Postgres with
 * PROMPTRUN_E2E_DATABASE=postgres; docs/PRODUCT-RULES.md "Run messages"): a run's messages, env
 * values unmasked, are exactly what its first model call sent on the wire (a wire-level fake
 * OpenAI); the history is the one the run carried, whatever its channel got later; a memory window
 * shows only what it allowed; env values never appear; another tenant's run is a 404; a run that
 * has not executed shows what it would carry now (render's answer) with memory null. Every answer
 * is checked against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { FakeRequest } from "@promptrun/core/testing";
import { pushPrompts } from "./hardening/support.ts";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import {
  answer,
  callTools,
  createRun,
  lastRole,
  lastUserText,
  type ModelRouter,
  messagesOf,
  startModelRouter,
  submitToolOutputs,
  toolCall,
  waitForPause,
  waitForRunState,
} from "./support/tool-runs.ts";

const SECRET_VALUE = "sk-brand-secret-41c7e2";
const REQUEST_SECRET = "request-level-secret-93ab";
const MESSAGES_PATH = "/api/v1/promptruns/{id}/messages";

const router: ModelRouter = startModelRouter();
router.script("chat", (request) => answer(`re: ${lastUserText(request)}`));
router.script("windowed", (request) => answer(`re: ${lastUserText(request)}`));
// Asks the client for an order lookup, then answers with what the client said.
router.script("orders", (request) =>
  lastRole(request) === "tool"
    ? answer("Order: shipped")
    : callTools([toolCall("call_o1", "lookup_order", { number: "A-1" })]),
);

let server: TestServer;
let otherKey: string;
let document: OpenApiDocumentJson;

const text = { text: { type: "string" } };
const userText = { role: "user", content: "{{text}}" };

beforeAll(async () => {
  server = await startServer({
    env: { OPENAI_API_KEY: "sk-test-openai", OPENAI_BASE_URL: router.baseUrl },
  });
  await pushPrompts(server, server.tenantId, [
    {
      slug: "chat",
      model: "openai:chat",
      inputs: text,
      messages: [{ role: "system", content: "Be brief. Sign as {{env.BRAND}}." }, userText],
    },
    {
      slug: "windowed",
      model: "openai:windowed",
      memory: { maxMessages: 2 },
      inputs: text,
      messages: [userText],
    },
    {
      slug: "orders",
      model: "openai:orders",
      inputs: text,
      messages: [userText],
      tools: [
        {
          type: "function",
          name: "lookup_order",
          parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
        },
      ],
    },
  ]);
  const set = await server.cli("envs", "set", server.tenantId, "production", `BRAND=${SECRET_VALUE}`);
  expect(set.code, set.stderr).toBe(0);
  const other = await server.cli<{ apiKey: string }>("tenants", "create", "other");
  otherKey = other.json.apiKey;
  document = await fetchOpenApiDocument(server.url);
}, 60_000);
afterAll(async () => {
  await server?.dispose();
  await router.close();
});

interface RunMessages {
  messages: Array<{ role: string; content: unknown }>;
  memory: { messages: number; dropped: number } | null;
}

/** GET …/messages; the body checked against the served document for its status. */
async function messagesResponse(
  id: string,
  key?: string,
): Promise<{ status: number; body: unknown; text: string }> {
  const response = await api(server, `/api/v1/promptruns/${id}/messages`, key === undefined ? {} : { key });
  const text = await response.text();
  const body = JSON.parse(text) as unknown;
  const validate = responseValidator(document, MESSAGES_PATH, "get", String(response.status));
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  return { status: response.status, body, text };
}

const runMessages = async (id: string): Promise<RunMessages> => {
  const { status, body } = await messagesResponse(id);
  expect(status).toBe(200);
  return body as RunMessages;
};

/** Runs a prompt to its end and returns its id and the messages its (only) model call sent. */
async function runAndCapture(model: string, slug: string, body: Record<string, unknown>) {
  const before = router.requestsFor(model).length;
  const { id } = await createRun(server, slug, body);
  const run = await waitForRun(server, id);
  expect(run.status, JSON.stringify(run)).toBe("completed");
  const sent = router.requestsFor(model).slice(before) as FakeRequest[];
  expect(sent).toHaveLength(1);
  return { id, run, sent: messagesOf(sent[0]!) };
}

/** The messages with each masked env var given its value: what the run sent. */
const unmasked = (messages: unknown) =>
  JSON.parse(JSON.stringify(messages).replaceAll("[env:BRAND]", SECRET_VALUE));

describe("a run's messages", () => {
  test("two runs on one channel: the second's are system + the first exchange + its own, as sent", async () => {
    const thread = crypto.randomUUID();
    const first = await runAndCapture("chat", "chat", { thread, inputs: { text: "Hello there" } });
    const second = await runAndCapture("chat", "chat", { thread, inputs: { text: "And again" } });
    const system = { role: "system", content: "Be brief. Sign as [env:BRAND]." };

    expect(await runMessages(first.id)).toEqual({
      messages: [system, { role: "user", content: "Hello there" }],
      memory: { messages: 0, dropped: 0 },
    });
    const answer = await runMessages(second.id);
    expect(answer).toEqual({
      messages: [
        system,
        { role: "user", content: "Hello there" },
        { role: "assistant", content: "re: Hello there" },
        { role: "user", content: "And again" },
      ],
      memory: { messages: 2, dropped: 0 },
    });
    expect(answer.memory).toEqual(second.run.memory as RunMessages["memory"]);
    expect(unmasked(answer.messages)).toEqual(second.sent);
    expect(unmasked((await runMessages(first.id)).messages)).toEqual(first.sent);

    // The channel grows (a later run, an import, another channel): the second run's answer stays.
    await runAndCapture("chat", "chat", { thread, inputs: { text: "Third" } });
    const imported = await api(server, `/api/v1/threads/${thread}/messages`, {
      method: "POST",
      json: { messages: [{ role: "user", content: "imported later" }] },
    });
    expect(imported.status).toBe(201);
    await runAndCapture("chat", "chat", { thread, channel: "side", inputs: { text: "Elsewhere" } });
    expect(await runMessages(second.id)).toEqual(answer);
  });

  test("a memory window: the run carried only the newest whole exchange it allowed", async () => {
    const thread = crypto.randomUUID();
    for (const word of ["one", "two"])
      await runAndCapture("windowed", "windowed", { thread, inputs: { text: word } });
    const third = await runAndCapture("windowed", "windowed", { thread, inputs: { text: "three" } });
    const answer = await runMessages(third.id);
    expect(answer).toEqual({
      messages: [
        { role: "user", content: "two" },
        { role: "assistant", content: "re: two" },
        { role: "user", content: "three" },
      ],
      memory: { messages: 2, dropped: 2 },
    });
    expect(answer.messages).toEqual(third.sent as RunMessages["messages"]);
  });

  test("env values never appear: an environment's and a request's envVars show as [env:NAME]", async () => {
    const { id, sent } = await runAndCapture("chat", "chat", {
      inputs: { text: "hi" },
      envVars: { BRAND: REQUEST_SECRET },
    });
    // The model got the request's value; the answer names it only.
    expect(JSON.stringify(sent)).toContain(REQUEST_SECRET);
    const { text } = await messagesResponse(id);
    expect(text).toContain("[env:BRAND]");
    expect(text).not.toContain(REQUEST_SECRET);
    expect(text).not.toContain(SECRET_VALUE);
  });

  test("another tenant's run is the 404 of an unknown id; without a key, 401", async () => {
    const { id } = await runAndCapture("chat", "chat", { inputs: { text: "mine" } });
    const foreign = await messagesResponse(id, otherKey);
    const unknown = await messagesResponse(crypto.randomUUID(), otherKey);
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect((foreign.body as { code: string }).code).toBe((unknown.body as { code: string }).code);
    expect(foreign.text).not.toContain("mine");
    expect((await api(server, `/api/v1/promptruns/${id}/messages`, { key: null })).status).toBe(401);
  });

  test("a run not executed yet: the history it would carry now (render's answer) and memory null", async () => {
    const thread = crypto.randomUUID();
    await runAndCapture("chat", "chat", { thread, inputs: { text: "Hello there" } });
    // A run paused for a client tool holds the channel: the run created after it stays queued.
    const paused = await createRun(server, "orders", { thread, inputs: { text: "Where is A-1?" } });
    await waitForPause(server, paused.id);
    const queuedBody = { thread, inputs: { text: "and my refund?" } };
    const queued = await createRun(server, "chat", queuedBody);
    expect(await waitForRunState(server, queued.id, (run) => run.phase === "queued", "queued")).toMatchObject(
      {
        status: "pending",
        startedAt: null,
        memory: null,
      },
    );

    const rendered = await api(server, "/api/v1/prompts/chat/latest/render", {
      method: "POST",
      json: queuedBody,
    });
    expect(rendered.status).toBe(200);
    const waiting = await runMessages(queued.id);
    expect(waiting).toEqual({ messages: ((await rendered.json()) as RunMessages).messages, memory: null });
    expect(waiting.messages.map((message) => message.content)).toEqual([
      "Be brief. Sign as [env:BRAND].",
      "Hello there",
      "re: Hello there",
      "and my refund?",
    ]);
    // The paused run has sent its first call; its memory is recorded when it ends.
    expect(await runMessages(paused.id)).toEqual({
      messages: [
        { role: "user", content: "Hello there" },
        { role: "assistant", content: "re: Hello there" },
        { role: "user", content: "Where is A-1?" },
      ],
      memory: null,
    });

    const submitted = await submitToolOutputs(server, paused.id, [
      { toolCallId: "call_o1", output: "shipped" },
    ]);
    expect(submitted.status).toBe(202);
    expect(await waitForRun(server, paused.id)).toMatchObject({ status: "completed" });
    const done = await waitForRun(server, queued.id);
    expect(done).toMatchObject({ status: "completed", memory: { messages: 6, dropped: 0 } });

    // Ended: the paused run shows its first call only (its tool step is in `steps`); the queued
    // run carried the whole tool exchange, in the order it was sent.
    expect((await runMessages(paused.id)).memory).toEqual({ messages: 2, dropped: 0 });
    expect((await runMessages(paused.id)).messages).toHaveLength(3);
    const carried = await runMessages(queued.id);
    expect(carried.memory).toEqual({ messages: 6, dropped: 0 });
    expect(carried.messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    expect(carried.messages[4]!.content).toEqual([
      { type: "tool-call", toolCallId: "call_o1", name: "lookup_order", arguments: { number: "A-1" } },
    ]);
    expect(carried.messages[5]!.content).toEqual([
      { type: "tool-result", toolCallId: "call_o1", name: "lookup_order", output: "shipped", isError: false },
    ]);
    const sent = messagesOf(router.requestsFor("chat").at(-1)!);
    expect(sent.map((message) => message.role)).toEqual(carried.messages.map((message) => message.role));
    expect(sent.at(-1)).toEqual({ role: "user", content: "and my refund?" });
  }, 60_000);
});
