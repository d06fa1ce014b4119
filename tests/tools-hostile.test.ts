/**
 * Tools against hostile or broken parties, through the real server (SQLite, or Postgres + Redis
 * with PROMPTRUN_E2E_DATABASE=postgres), docs/TOOLS.md and docs/PRODUCT-RULES.md "Tool outputs":
 * tool outputs from the wrong tenant, for a run not waiting, with wrong ids, or too large (the run
 * stays as it was); an http tool aimed at a private address; MCP servers that hang or answer
 * garbage; a model calling a tool it was not offered; invalid tool definitions pushed over REST.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type LocalServer, startHttpServer, startMcpServer } from "@promptrun/core/testing";
import { z } from "zod";
import { createTenant, echoPrompt, pushPrompts, type Tenant } from "./hardening/support.ts";
import { fetchOpenApiDocument, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import {
  answer,
  callTools,
  createRun,
  errorOf,
  getRun,
  lastRole,
  type ModelRouter,
  type Run,
  startModelRouter,
  submitToolOutputs,
  toolCall,
  waitForPause,
  waitForRunState,
} from "./support/tool-runs.ts";

const router: ModelRouter = startModelRouter();
const localServers: LocalServer[] = [];
const servers: TestServer[] = [];

const registerDocs = (server: Parameters<Parameters<typeof startMcpServer>[0]["register"]>[0]) => {
  server.registerTool(
    "search_docs",
    { description: "Search the docs.", inputSchema: { query: z.string() } },
    async ({ query }) => ({ content: [{ type: "text", text: `found ${query}` }] }),
  );
};
/** MCP servers: hanging on the listing, hanging on a call, all garbage, garbage on a call only. */
const hangsOnList = startMcpServer({ register: registerDocs, hangOn: "tools/list" });
const hangsOnCall = startMcpServer({ register: registerDocs, hangOn: "tools/call" });
const sane = startMcpServer({ register: registerDocs });
const garbage = startHttpServer(
  () =>
    new Response("<html><body>Welcome to nginx!</body></html>", { headers: { "content-type": "text/html" } }),
);
const garbageOnCall = startHttpServer(async (request) => {
  const body = request.method === "POST" ? await request.text() : undefined;
  if (body?.includes('"tools/call"'))
    return new Response("{ this is not json", { headers: { "content-type": "application/json" } });
  // Anything else goes to a real MCP server, so the session opens and lists.
  return fetch(sane.url, { method: request.method, headers: request.headers, body });
});
/** A server on a private address that must never hear from a guarded server. */
const privateTarget = startHttpServer(() => Response.json({ secret: "internal" }));
localServers.push(garbage, garbageOnCall, privateTarget, hangsOnList, hangsOnCall, sane);

const lookupOrder = {
  type: "function",
  name: "lookup_order",
  parameters: {
    type: "object",
    properties: { number: { type: "string" } },
    required: ["number"],
    additionalProperties: false,
  },
};
const messageInput = { message: { type: "string" } };
const userMessage = [{ role: "user", content: "{{message}}" }];
const mcpPrompt = (slug: string, url: string) => ({
  slug,
  model: `openai:${slug}`,
  inputs: messageInput,
  messages: userMessage,
  tools: [{ type: "mcp", server: { url }, timeoutSeconds: 1 }],
});

let server: TestServer;
let intruder: Tenant;

/**
 * A model answering the tool results it got (as `id: content` lines), else calling `calls`.
 * OpenAI's tool messages have no error flag: the AI SDK sends an error result as `{"error": output}`.
 */
const callsThenEcho =
  (calls: Array<ReturnType<typeof toolCall>>) =>
  (request: Parameters<Parameters<ModelRouter["script"]>[1]>[0]) =>
    lastRole(request) === "tool"
      ? answer(
          request.toolResults.map((result) => `${result.toolCallId}: ${String(result.content)}`).join("\n"),
        )
      : callTools(calls);

router.script("orders", (request) =>
  lastRole(request) === "tool"
    ? answer("done")
    : callTools([
        toolCall("call_1", "lookup_order", { number: "A-1" }),
        toolCall("call_2", "lookup_order", { number: "A-2" }),
      ]),
);

beforeAll(async () => {
  server = await startServer({
    env: { OPENAI_API_KEY: "sk-test-openai", OPENAI_BASE_URL: router.baseUrl },
  });
  servers.push(server);
  intruder = await createTenant(server, "intruder");
  await pushPrompts(server, server.tenantId, [
    {
      slug: "orders",
      model: "openai:orders",
      inputs: messageInput,
      messages: userMessage,
      tools: [lookupOrder],
    },
    {
      slug: "rogue",
      model: "openai:rogue",
      inputs: messageInput,
      messages: userMessage,
      tools: [lookupOrder],
    },
    mcpPrompt("mcp-hangs-on-list", hangsOnList.url),
    mcpPrompt("mcp-hangs-on-call", hangsOnCall.url),
    mcpPrompt("mcp-garbage", `${garbage.origin}/mcp?token=s3cret-token`),
    mcpPrompt("mcp-garbage-on-call", `${garbageOnCall.origin}/mcp`),
    echoPrompt("slow-echo", 100),
    echoPrompt("plain-echo"),
  ]);
});
afterAll(async () => {
  for (const started of servers) await started.dispose();
  for (const local of localServers) local.stop();
  await router.close();
});

/** A paused run of `orders` (two lookup_order calls, call_1 and call_2). */
async function pausedOrder(thread?: string): Promise<Run> {
  const { id } = await createRun(server, "orders", {
    inputs: { message: "Where are my orders?" },
    ...(thread ? { thread } : {}),
  });
  return waitForPause(server, id);
}

/** The run is exactly as it was when paused: still waiting, same steps and required action. */
async function expectUnchanged(paused: Run) {
  const now = await getRun(server, String(paused.id));
  expect(now).toMatchObject({ status: "pending", phase: "requires_action" });
  expect(now.steps).toEqual(paused.steps);
  expect(now.requiredAction).toEqual(paused.requiredAction);
}

const bothOutputs = [
  { toolCallId: "call_1", output: "shipped" },
  { toolCallId: "call_2", output: "packing" },
];

describe("tool outputs that must be refused", () => {
  test("another tenant's run: 404, as for a run that does not exist; a stream token: 401", async () => {
    const paused = await pausedOrder();
    const id = String(paused.id);
    const foreign = await submitToolOutputs({ url: server.url, apiKey: intruder.apiKey }, id, bothOutputs);
    expect(await errorOf(foreign)).toEqual({ status: 404, error: `run '${id}' not found` });
    const missing = crypto.randomUUID();
    const unknown = await submitToolOutputs(server, missing, bothOutputs);
    expect(await errorOf(unknown)).toEqual({ status: 404, error: `run '${missing}' not found` });

    const minted = await api(server, `/api/v1/threads/${paused.thread}/stream-token`, { method: "POST" });
    const { token } = (await minted.json()) as { token: string };
    const withStreamToken = await submitToolOutputs({ url: server.url, apiKey: token }, id, bothOutputs);
    expect(withStreamToken.status).toBe(401);
    await expectUnchanged(paused);

    // The owner still can.
    expect((await submitToolOutputs(server, id, bothOutputs)).status).toBe(202);
    expect(await waitForRun(server, id)).toMatchObject({ status: "completed", output: "done" });
  });

  test("a run not waiting: 409 naming its status and phase (completed, running, queued)", async () => {
    const completed = await createRun(server, "plain-echo", { inputs: { text: "hi" } });
    await waitForRun(server, completed.id);
    expect(await errorOf(await submitToolOutputs(server, completed.id, bothOutputs))).toEqual({
      status: 409,
      error: "run is completed, not waiting for tool outputs",
    });

    const slow = await createRun(server, "slow-echo", {
      inputs: { text: "one two three four five six seven eight" },
    });
    await waitForRunState(server, slow.id, (run) => run.phase === "running", "running");
    expect(await errorOf(await submitToolOutputs(server, slow.id, bothOutputs))).toEqual({
      status: 409,
      error: "run is pending (phase running), not waiting for tool outputs",
    });

    const thread = crypto.randomUUID();
    const paused = await pausedOrder(thread);
    const queued = await createRun(server, "plain-echo", { inputs: { text: "behind" }, thread });
    expect(await errorOf(await submitToolOutputs(server, queued.id, bothOutputs))).toEqual({
      status: 409,
      error: "run is pending (phase queued), not waiting for tool outputs",
    });
    await expectUnchanged(paused);
    expect((await submitToolOutputs(server, String(paused.id), bothOutputs)).status).toBe(202);
    expect(await waitForRun(server, queued.id)).toMatchObject({ status: "completed", output: "behind" });
  });

  test("unknown, repeated and missing call ids, a missing output, an unknown field: 400 naming the entry; the run stays paused", async () => {
    const paused = await pausedOrder();
    const id = String(paused.id);
    const cases: Array<[unknown, string]> = [
      [
        [...bothOutputs, { toolCallId: "call_9", output: "?" }],
        "toolOutputs[2].toolCallId: 'call_9' is not a tool call the run waits for",
      ],
      [
        [...bothOutputs, { toolCallId: "call_1", output: "again" }],
        "toolOutputs[2].toolCallId: 'call_1' is repeated",
      ],
      [[bothOutputs[0]], "toolOutputs: no output for 'call_2' (lookup_order)"],
      [[bothOutputs[0], { toolCallId: "call_2" }], "toolOutputs[1].output: required"],
    ];
    const document = await fetchOpenApiDocument(server.url);
    const validate400 = responseValidator(document, "/api/v1/promptruns/{id}/tool-outputs", "post", "400");
    for (const [toolOutputs, message] of cases) {
      const response = await api(server, `/api/v1/promptruns/${id}/tool-outputs`, {
        method: "POST",
        json: { toolOutputs },
      });
      const body = (await response.json()) as { error: string };
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(body.error).toStartWith(message);
      expect(validate400(body), JSON.stringify(validate400.errors)).toBe(true);
    }
    const extraField = await api(server, `/api/v1/promptruns/${id}/tool-outputs`, {
      method: "POST",
      json: { toolOutputs: bothOutputs, runId: id },
    });
    expect((await errorOf(extraField)).status).toBe(400);
    await expectUnchanged(paused);
    expect((await submitToolOutputs(server, id, bothOutputs)).status).toBe(202);
    expect(await waitForRun(server, id)).toMatchObject({ status: "completed" });
  });

  test("a 10 MB output is refused by the body limit (413), a 300 KB one by the output limit (400); nothing changes", async () => {
    const paused = await pausedOrder();
    const id = String(paused.id);
    const modelCallsBefore = router.requestsFor("orders").length;
    const huge = await submitToolOutputs(server, id, [
      { toolCallId: "call_1", output: "x".repeat(10 * 1024 * 1024) },
      bothOutputs[1]!,
    ]);
    expect(await errorOf(huge)).toMatchObject({ status: 413 });
    const large = await submitToolOutputs(server, id, [
      { toolCallId: "call_1", output: "y".repeat(300 * 1024) },
      bothOutputs[1]!,
    ]);
    const refused = await errorOf(large);
    expect(refused.status).toBe(400);
    expect(refused.error).toStartWith(
      "toolOutputs[0].output: 307200 bytes; at most 262144 bytes are allowed",
    );
    await expectUnchanged(paused);
    expect(router.requestsFor("orders")).toHaveLength(modelCallsBefore);

    // A 100 KB output is taken, and kept (and sent to the model) cut to 64 KB.
    const taken = await submitToolOutputs(server, id, [
      { toolCallId: "call_1", output: "z".repeat(100 * 1024) },
      bothOutputs[1]!,
    ]);
    expect(taken.status).toBe(202);
    const run = await waitForRun(server, id);
    expect(run.status).toBe("completed");
    const kept = (run.steps as Array<{ toolResults: Array<{ output: unknown }> }>)[0]!.toolResults[0]!.output;
    expect(String(kept)).toEndWith("…[truncated]");
    expect(Buffer.byteLength(String(kept))).toBeLessThanOrEqual(64 * 1024);
    const sent = router.requestsFor("orders").slice(modelCallsBefore);
    expect(sent).toHaveLength(1);
    expect(String(sent[0]!.toolResults[0]!.content)).toBe(String(kept));
  });
});

describe("server tools that misbehave", () => {
  test("a model calling an undeclared tool or with arguments that do not fit gets error results, and goes on", async () => {
    router.script(
      "rogue",
      callsThenEcho([
        toolCall("call_x", "launch_rockets", { target: "moon" }),
        toolCall("call_y", "lookup_order", { number: 7 }),
        toolCall("call_z", "lookup_order", "{not json"),
      ]),
    );
    const { id } = await createRun(server, "rogue", { inputs: { message: "do something bad" } });
    const run = await waitForRun(server, id);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    const results = (run.steps as Array<{ toolResults: Array<Record<string, unknown>> }>)[0]!.toolResults;
    expect(results.map((result) => [result.toolCallId, result.isError, result.executedBy])).toEqual([
      ["call_x", true, "server"],
      ["call_y", true, "server"],
      ["call_z", true, "server"],
    ]);
    expect(results[0]!.output).toBe("the prompt has no tool named 'launch_rockets'");
    // docs/TOOLS.md "Arguments first": the model gets the first violation, as documented.
    expect(results[1]!.output).toBe(
      "arguments do not match the parameters of lookup_order: /number: must be string",
    );
    expect(results[2]!.output).toBe("the arguments are not a JSON object");
    // Nothing paused (no call the caller could answer); the model heard every refusal.
    const second = router.requestsFor("rogue")[1]!;
    expect(second.toolResults.map((result) => [result.toolCallId, result.content])).toEqual(
      results.map((result) => [result.toolCallId, JSON.stringify({ error: result.output })]),
    );
  });

  test("an MCP server that never answers the listing: the run fails before any model call, naming the entry", async () => {
    const started = Date.now();
    const { id } = await createRun(server, "mcp-hangs-on-list", { inputs: { message: "search" } });
    const run = await waitForRun(server, id);
    expect(run.status).toBe("failed");
    expect(run.error).toBe(`tools[0] (mcp ${hangsOnList.origin}/…): MCP request timed out after 1 s`);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(router.requestsFor("mcp-hangs-on-list")).toHaveLength(0);
    expect(run.steps).toEqual([]);
  });

  test("an MCP server that never answers a call: the model gets a timeout error result, the run completes", async () => {
    router.script(
      "mcp-hangs-on-call",
      callsThenEcho([toolCall("call_m", "search_docs", { query: "refunds" })]),
    );
    const { id } = await createRun(server, "mcp-hangs-on-call", { inputs: { message: "search" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({
      status: "completed",
      output: `call_m: ${JSON.stringify({ error: "MCP request timed out after 1 s" })}`,
    });
    const result = (run.steps as Array<{ toolResults: Array<Record<string, unknown>> }>)[0]!.toolResults[0];
    expect(result).toMatchObject({
      isError: true,
      output: "MCP request timed out after 1 s",
      executedBy: "server",
    });
  });

  test("a server that is not MCP at all: the run fails naming the entry by scheme, host and port only", async () => {
    const { id } = await createRun(server, "mcp-garbage", { inputs: { message: "search" } });
    const run = await waitForRun(server, id);
    expect(run.status).toBe("failed");
    expect(run.error).toBe(
      `tools[0] (mcp ${garbage.origin}/…): MCP request failed: Streamable HTTP error: Unexpected content type: text/html`,
    );
    expect(String(run.error)).not.toContain("s3cret-token");
    expect(router.requestsFor("mcp-garbage")).toHaveLength(0);
  });

  test("an MCP server answering a call with garbage: the model gets an error result, the run completes", async () => {
    router.script("mcp-garbage-on-call", callsThenEcho([toolCall("call_g", "search_docs", { query: "x" })]));
    const { id } = await createRun(server, "mcp-garbage-on-call", { inputs: { message: "search" } });
    const run = await waitForRun(server, id);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    const result = (run.steps as Array<{ toolResults: Array<Record<string, unknown>> }>)[0]!.toolResults[0]!;
    expect(result.isError).toBe(true);
    expect(result.output).toBe("MCP request failed: the server's answer is not JSON");
    expect(run.output).toBe(`call_g: ${JSON.stringify({ error: result.output })}`);
  });
});

describe("private URLs not allowed", () => {
  test("an http tool on a private address: the model gets `request refused`, the private server hears nothing; an mcp entry there fails the run", async () => {
    const guarded = await startServer({
      env: {
        PROMPTRUN_ALLOW_PRIVATE_URLS: "false",
        OPENAI_API_KEY: "sk-test-openai",
        OPENAI_BASE_URL: router.baseUrl,
      },
    });
    servers.push(guarded);
    const port = new URL(privateTarget.origin).port;
    await pushPrompts(guarded, guarded.tenantId, [
      {
        slug: "internal",
        model: "openai:internal",
        inputs: messageInput,
        messages: userMessage,
        tools: [
          {
            type: "http",
            name: "read_internal",
            parameters: { type: "object", properties: { q: { type: "string" } } },
            request: { url: `http://127.0.0.1:${port}/admin?q={{args.q}}` },
          },
          {
            type: "http",
            name: "read_localhost",
            parameters: { type: "object", properties: {} },
            request: { url: `http://localhost:${port}/admin` },
          },
        ],
      },
      mcpPrompt("internal-mcp", `http://127.0.0.1:${port}/mcp`),
    ]);
    router.script(
      "internal",
      callsThenEcho([
        toolCall("call_i1", "read_internal", { q: "users" }),
        toolCall("call_i2", "read_localhost", {}),
      ]),
    );
    const before = privateTarget.received.length;
    const { id } = await createRun(guarded, "internal", { inputs: { message: "read it" } });
    const run = await waitForRun(guarded, id);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    const results = (run.steps as Array<{ toolResults: Array<Record<string, unknown>> }>)[0]!.toolResults;
    expect(results.map((result) => result.isError)).toEqual([true, true]);
    for (const result of results)
      expect(String(result.output)).toStartWith("request refused: url must resolve to a public address");
    expect(String(run.output)).toStartWith(`call_i1: {"error":"request refused: url must resolve`);
    expect(String(run.output)).not.toContain("secret");

    const mcpRun = await waitForRun(
      guarded,
      (await createRun(guarded, "internal-mcp", { inputs: { message: "x" } })).id,
    );
    expect(mcpRun.status).toBe("failed");
    expect(String(mcpRun.error)).toStartWith(
      `tools[0] (mcp http://127.0.0.1:${port}/…): MCP request refused: url must resolve to a public address`,
    );
    expect(router.requestsFor("internal-mcp")).toHaveLength(0);
    expect(privateTarget.received.length - before).toBe(0);
  });
});

describe("invalid tool definitions pushed over REST", () => {
  const base = { slug: "bad-tools", model: "dev:echo", messages: [{ role: "user", content: "hi" }] };
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      "parameters not an object schema",
      { tools: [{ type: "function", name: "f", parameters: { type: "string" } }] },
      "tools[0].parameters: must be an object schema",
    ],
    [
      "parameters that do not compile",
      {
        tools: [
          {
            type: "function",
            name: "f",
            parameters: { type: "object", properties: { n: { type: "nonsense" } } },
          },
        ],
      },
      "tools[0].parameters: ",
    ],
    [
      "a duplicate name",
      {
        tools: [
          { type: "function", name: "f", parameters: { type: "object" } },
          {
            type: "http",
            name: "f",
            parameters: { type: "object" },
            request: { url: "https://example.com/" },
          },
        ],
      },
      "tools[1].name: duplicate tool name 'f'",
    ],
    [
      "a name providers refuse",
      { tools: [{ type: "function", name: "look up", parameters: { type: "object" } }] },
      "tools[0].name: ",
    ],
    [
      "an unknown placeholder in an http url",
      {
        tools: [
          {
            type: "http",
            name: "h",
            parameters: { type: "object", properties: { city: { type: "string" } } },
            request: { url: "https://example.com/?q={{args.town}}" },
          },
        ],
      },
      "tools[0].request.url: ",
    ],
    [
      "a url without http(s)",
      {
        tools: [
          {
            type: "http",
            name: "h",
            parameters: { type: "object" },
            request: { url: "ftp://example.com/x" },
          },
        ],
      },
      "tools[0].request.url: ",
    ],
    ["an unknown tool type", { tools: [{ type: "shell", name: "sh", command: "rm -rf /" }] }, "tools[0]"],
    [
      "maxSteps over 32",
      { tools: [{ type: "function", name: "f", parameters: { type: "object" } }], maxSteps: 33 },
      "maxSteps: ",
    ],
    ["toolChoice without tools", { toolChoice: "required" }, "toolChoice: the prompt has no tools"],
  ];
  for (const [name, extra, message] of cases)
    test(`${name}: 400 naming the path`, async () => {
      const response = await api(server, "/api/v1/prompts", { method: "POST", json: { ...base, ...extra } });
      const body = (await response.json()) as { error: string };
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(body.error).toStartWith(`prompt 'bad-tools': ${message}`);
      const listed = await api(server, "/api/v1/prompts/bad-tools");
      expect(listed.status).toBe(404);
    });
});
