/**
 * Client tool calls end to end over REST (real server, SQLite or Postgres with
 * PROMPTRUN_E2E_DATABASE): a prompt with a `function` tool on a wire-level fake OpenAI-compatible
 * provider scripted to call it; the run pauses (phase requires_action), POST
 * /api/v1/promptruns/{id}/tool-outputs answers it and the run completes in two steps, the model
 * having received the output. Then the refusals (409 not waiting, 400 ids and size, 404 another
 * tenant, 401 a stream token) and Idempotency-Key replays; every answer checked against the
 * served OpenAPI document (docs/PRODUCT-RULES.md "Tool outputs").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { type FakeRequest, startFakeOpenAI } from "@promptrun/core/testing";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

const SUBMIT_PATH = "/api/v1/promptruns/{id}/tool-outputs";
const RUN_PATH = "/api/v1/promptruns/{id}";

interface Run {
  id: string;
  thread: string;
  status: string;
  phase: string | null;
  output: string | null;
  error: string | null;
  requiredAction: {
    type: string;
    toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
    expiresAt: string;
  } | null;
  steps: Array<{
    index: number;
    toolCalls: Array<{ id: string; name: string }>;
    toolResults: Array<{
      toolCallId: string;
      name: string;
      output: unknown;
      isError: boolean;
      executedBy: string;
    }>;
    finishReason: string | null;
  }>;
}

/**
 * The model: asked without tool results, it calls lookup_order (twice when the question says
 * "two orders"); given results, it answers `Result:` and their contents, as it received them.
 */
const fake = startFakeOpenAI((request: FakeRequest) => {
  if (request.toolResults.length > 0)
    return {
      type: "stream",
      tokens: ["Result: ", request.toolResults.map((result) => String(result.content)).join(" | ")],
    };
  const two = JSON.stringify(request.body).includes("two orders");
  return {
    type: "stream",
    tokens: ["Let me look."],
    toolCalls: two
      ? [
          { id: "call_a", name: "lookup_order", arguments: { number: "A-1" } },
          { id: "call_b", name: "lookup_order", arguments: { number: "B-2" } },
        ]
      : [{ id: "call_a", name: "lookup_order", arguments: { number: "A-1" } }],
  };
});

const ORDERS_PROMPT = `slug: orders
model: fake:gpt-test
inputs: { question: { type: string } }
messages:
  - { role: system, content: "You answer questions about orders." }
  - { role: user, content: "{{question}}" }
tools:
  - type: function
    name: lookup_order
    description: Look an order up by its number.
    parameters: { type: object, properties: { number: { type: string } }, required: [number] }
`;

let server: TestServer;
let other: { url: string; apiKey: string };
let document: OpenApiDocumentJson;

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_PROVIDERS: `fake=${fake.baseUrl}` } });
  const dir = `${server.dataDir}/tool-prompts`;
  mkdirSync(dir, { recursive: true });
  await Bun.write(`${dir}/orders.yaml`, ORDERS_PROMPT);
  const pushed = await server.cli("prompts", "push", dir, "--tenant", server.tenantId);
  expect(pushed.code, pushed.stderr).toBe(0);
  const created = await server.cli<{ apiKey: string }>("tenants", "create", "other");
  other = { url: server.url, apiKey: created.json.apiKey };
  document = await fetchOpenApiDocument(server.url);
}, 120_000);
afterAll(async () => {
  await server?.dispose();
  await fake.close();
});

const expectDocumented = (path: string, method: string, status: number, body: unknown) => {
  const validate = responseValidator(document, path, method, String(status));
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
};

async function createRun(question: string): Promise<{ id: string; thread: string }> {
  const response = await api(server, "/api/v1/prompts/orders/latest/runs", {
    method: "POST",
    json: { inputs: { question } },
  });
  expect(response.status).toBe(202);
  return (await response.json()) as { id: string; thread: string };
}

async function getRun(id: string): Promise<Run> {
  const response = await api(server, `/api/v1/promptruns/${id}`);
  const run = (await response.json()) as Run;
  expect(response.status).toBe(200);
  expectDocumented(RUN_PATH, "get", 200, run);
  return run;
}

/** Polls until the run pauses; fails when it ends first. */
async function pausedRun(question = "Where is my order?"): Promise<Run> {
  const { id } = await createRun(question);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const run = await getRun(id);
    if (run.phase === "requires_action") return run;
    if (run.status !== "pending") throw new Error(`run ended before it paused: ${JSON.stringify(run)}`);
    if (Date.now() > deadline) throw new Error(`run ${id} did not pause`);
    await Bun.sleep(25);
  }
}

async function submit(
  id: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await api(server, `/api/v1/promptruns/${id}/tool-outputs`, {
    method: "POST",
    json: body,
    ...(options.key !== undefined ? { key: options.key } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const json = (await response.json()) as Record<string, unknown>;
  expectDocumented(SUBMIT_PATH, "post", response.status, json);
  return { status: response.status, body: json, headers: response.headers };
}

describe("POST /api/v1/promptruns/{id}/tool-outputs", () => {
  test("the run pauses for the tool, the outputs continue it, it completes in two steps", async () => {
    const paused = await pausedRun();
    expect(paused).toMatchObject({ status: "pending", phase: "requires_action", output: null });
    expect(paused.requiredAction).toMatchObject({
      type: "submit_tool_outputs",
      toolCalls: [{ id: "call_a", name: "lookup_order", arguments: { number: "A-1" } }],
    });
    expect(Date.parse(paused.requiredAction!.expiresAt)).toBeGreaterThan(Date.now());
    expect(paused.steps.map((step) => [step.index, step.toolCalls.length, step.toolResults.length])).toEqual([
      [0, 1, 0],
    ]);

    const answered = await submit(paused.id, {
      toolOutputs: [{ toolCallId: "call_a", output: { status: "shipped", on: "May 2" } }],
    });
    expect(answered.status).toBe(202);
    expect(answered.body).toEqual({ id: paused.id, thread: paused.thread });
    expect(answered.headers.get("location")).toBe(`/api/v1/promptruns/${paused.id}`);

    const done = (await waitForRun(server, paused.id)) as unknown as Run;
    expectDocumented(RUN_PATH, "get", 200, done);
    expect(done).toMatchObject({ status: "completed", phase: null, requiredAction: null });
    expect(done.steps).toHaveLength(2);
    expect(done.steps[0]?.toolResults).toEqual([
      {
        toolCallId: "call_a",
        name: "lookup_order",
        output: { status: "shipped", on: "May 2" },
        isError: false,
        executedBy: "client",
      },
    ]);
    // The model received the output (as JSON text) and answered with it.
    expect(done.output).toBe('Result: {"status":"shipped","on":"May 2"}');

    // Answered: a second submission finds the run ended.
    const again = await submit(paused.id, { toolOutputs: [{ toolCallId: "call_a", output: "x" }] });
    expect(again).toMatchObject({
      status: 409,
      body: { code: "conflict", error: "run is completed, not waiting for tool outputs" },
    });
  });

  test("400 for an unknown, a repeated or a missing id and a 300 KB output; the pause stays", async () => {
    const paused = await pausedRun("Where are my two orders?");
    expect(paused.requiredAction?.toolCalls.map((call) => call.id)).toEqual(["call_a", "call_b"]);
    const cases: Array<[unknown, string]> = [
      [
        {
          toolOutputs: [
            { toolCallId: "call_a", output: 1 },
            { toolCallId: "call_b", output: 2 },
            { toolCallId: "call_z", output: 3 },
          ],
        },
        "toolOutputs[2].toolCallId: 'call_z' is not a tool call the run waits for",
      ],
      [
        {
          toolOutputs: [
            { toolCallId: "call_a", output: 1 },
            { toolCallId: "call_a", output: 2 },
          ],
        },
        "toolOutputs[1].toolCallId: 'call_a' is repeated",
      ],
      [
        { toolOutputs: [{ toolCallId: "call_a", output: 1 }] },
        "toolOutputs: no output for 'call_b' (lookup_order)",
      ],
      [
        {
          toolOutputs: [
            { toolCallId: "call_a", output: "x".repeat(300 * 1024) },
            { toolCallId: "call_b", output: 2 },
          ],
        },
        "toolOutputs[0].output: 307200 bytes; at most 262144 bytes are allowed (UTF-8, its JSON when not a string)",
      ],
    ];
    for (const [body, error] of cases) {
      expect(await submit(paused.id, body)).toMatchObject({ status: 400, body: { code: "invalid", error } });
    }
    expect((await getRun(paused.id)).phase).toBe("requires_action");
    // Both answered at once: the run goes on.
    const both = {
      toolOutputs: [
        { toolCallId: "call_b", output: "B ok" },
        { toolCallId: "call_a", output: "A ok" },
      ],
    };
    expect((await submit(paused.id, both)).status).toBe(202);
    const done = (await waitForRun(server, paused.id)) as unknown as Run;
    expect(done.steps[0]?.toolResults.map((result) => [result.toolCallId, result.output])).toEqual([
      ["call_a", "A ok"],
      ["call_b", "B ok"],
    ]);
  });

  test("409 for a run that is not waiting any more (cancelled while paused)", async () => {
    const paused = await pausedRun();
    const cancelled = await api(server, `/api/v1/promptruns/${paused.id}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(await submit(paused.id, { toolOutputs: [{ toolCallId: "call_a", output: 1 }] })).toMatchObject({
      status: 409,
      body: { code: "conflict", error: "run is failed, not waiting for tool outputs" },
    });
  });

  test("Idempotency-Key: a retry answers the same 202 and continues the run once; another body is a 409", async () => {
    const paused = await pausedRun();
    const body = { toolOutputs: [{ toolCallId: "call_a", output: "shipped" }] };
    const headers = { "idempotency-key": `tools-${crypto.randomUUID()}` };
    const first = await submit(paused.id, body, { headers });
    expect(first.status).toBe(202);
    const replay = await submit(paused.id, body, { headers });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const changed = await submit(
      paused.id,
      { toolOutputs: [{ toolCallId: "call_a", output: "lost" }] },
      { headers },
    );
    expect(changed).toMatchObject({
      status: 409,
      body: { error: "Idempotency-Key reused with a different request" },
    });
    const done = (await waitForRun(server, paused.id)) as unknown as Run;
    expect(done.steps).toHaveLength(2);
    expect(done.steps[0]?.toolResults.map((result) => result.output)).toEqual(["shipped"]);
    // The replay still answers after the run has ended.
    expect((await submit(paused.id, body, { headers })).status).toBe(202);
  });

  test("another tenant gets 404, a stream token of the run's thread 401; neither touches the pause", async () => {
    const paused = await pausedRun();
    const body = { toolOutputs: [{ toolCallId: "call_a", output: "mine" }] };
    expect(await submit(paused.id, body, { key: other.apiKey })).toMatchObject({
      status: 404,
      body: { code: "not_found" },
    });
    const minted = await api(server, `/api/v1/threads/${paused.thread}/stream-token`, { method: "POST" });
    const { token } = (await minted.json()) as { token: string };
    const refused = await submit(paused.id, body, { key: token });
    expect(refused).toMatchObject({ status: 401, body: { code: "unauthorized" } });
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    expect((await getRun(paused.id)).phase).toBe("requires_action");
    expect((await submit(paused.id, body)).status).toBe(202);
  });
});
