/**
 * Tools end to end through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres), docs/TOOLS.md and docs/PRODUCT-RULES.md "Tool outputs": the
 * model is a wire-level fake OpenAI, the tools real local servers (a weather API on Bun.serve, an
 * MCP server made of the SDK's own classes). Server tools (http, mcp, two at once, maxSteps),
 * the client-tool round trip over REST with SSE, webhooks, thread memory and the next run, an
 * expired pause, outputs submitted twice, and the keyless dev:echo order-status demo.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type LocalServer, startHttpServer, startMcpServer } from "@promptrun/core/testing";
import { z } from "zod";
import { pushPrompts } from "./hardening/support.ts";
import {
  componentValidator,
  fetchOpenApiDocument,
  type OpenApiDocumentJson,
  responseValidator,
} from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import type { ReceivedEvent, SseConnection } from "./support/sse.ts";
import {
  addWebhookEnvironment,
  answer,
  callTools,
  createRun,
  errorOf,
  eventTrail,
  getRun,
  lastRole,
  lastUserText,
  type ModelRouter,
  openThreadStream,
  type Run,
  requiredActionOf,
  startModelRouter,
  startWebhookReceiver,
  submitToolOutputs,
  toolCall,
  type WebhookReceiver,
  waitForPause,
} from "./support/tool-runs.ts";

const PRICE = { inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 2 };
const MODELS = ["weather", "docs", "pair", "looper", "orders", "orders-quick", "orders-twice"];

const router: ModelRouter = startModelRouter();
const receiver: WebhookReceiver = startWebhookReceiver();

/** The weather API: `/weather?city=` answers at once; `/pair?city=` only once two requests are in. */
let weather: LocalServer;
const weatherOf = (city: string) => ({ city, temperature: city.length * 3, sky: "clear" });

const mcp = startMcpServer({
  register(server) {
    server.registerTool(
      "search_docs",
      { description: "Search the docs.", inputSchema: { query: z.string() } },
      async ({ query }) => ({ content: [{ type: "text", text: `found 2 pages about ${query}` }] }),
    );
    server.registerTool("drop_tables", { description: "Not for models.", inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "dropped" }],
    }));
  },
});

const cityParameters = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false,
};
const lookupOrder = {
  type: "function",
  name: "lookup_order",
  description: "Look an order up by its number.",
  parameters: {
    type: "object",
    properties: { number: { type: "string" } },
    required: ["number"],
    additionalProperties: false,
  },
};
const userMessage = [{ role: "user", content: "{{message}}" }];
const messageInput = { message: { type: "string" } };

const prompts = () => [
  {
    slug: "weather",
    model: "openai:weather",
    inputs: messageInput,
    messages: [{ role: "system", content: "Use the weather tool." }, ...userMessage],
    tools: [
      {
        type: "http",
        name: "get_weather",
        description: "Current weather of a city.",
        parameters: cityParameters,
        request: { url: `${weather.origin}/weather?city={{args.city}}` },
      },
    ],
  },
  {
    slug: "docs",
    model: "openai:docs",
    inputs: messageInput,
    messages: userMessage,
    tools: [{ type: "mcp", server: { url: mcp.url }, allowedTools: ["search_docs"] }],
  },
  {
    slug: "pair",
    model: "openai:pair",
    inputs: messageInput,
    messages: userMessage,
    tools: [
      {
        type: "http",
        name: "get_weather",
        parameters: cityParameters,
        request: { url: `${weather.origin}/pair?city={{args.city}}` },
        timeoutSeconds: 10,
      },
    ],
  },
  {
    slug: "looper",
    model: "openai:looper",
    inputs: messageInput,
    messages: userMessage,
    maxSteps: 3,
    tools: [
      {
        type: "http",
        name: "get_weather",
        parameters: cityParameters,
        request: { url: `${weather.origin}/weather?city={{args.city}}` },
      },
    ],
  },
  {
    slug: "orders",
    model: "openai:orders",
    inputs: messageInput,
    messages: userMessage,
    tools: [lookupOrder],
  },
  {
    slug: "orders-quick",
    model: "openai:orders-quick",
    inputs: messageInput,
    messages: userMessage,
    tools: [lookupOrder],
    toolTimeoutSeconds: 1,
  },
  {
    slug: "orders-twice",
    model: "openai:orders-twice",
    inputs: messageInput,
    messages: userMessage,
    tools: [lookupOrder],
  },
  { slug: "plain", model: "dev:echo", inputs: messageInput, messages: userMessage },
];

let server: TestServer;
let document: OpenApiDocumentJson;
const streams: SseConnection[] = [];

beforeAll(async () => {
  weather = startHttpServer(async (_request, url) => {
    const city = url.searchParams.get("city") ?? "?";
    if (url.pathname === "/pair") {
      // Answers once both calls of the step are in: calls made one after the other never get there.
      const deadline = Date.now() + 5_000;
      while (weather.received.filter((received) => received.target.startsWith("/pair")).length < 2) {
        if (Date.now() > deadline) return new Response("the second call never came", { status: 504 });
        await Bun.sleep(10);
      }
    }
    return Response.json(weatherOf(city));
  });
  server = await startServer({
    env: {
      OPENAI_API_KEY: "sk-test-openai",
      OPENAI_BASE_URL: router.baseUrl,
      PROMPTRUN_PRICES: JSON.stringify(Object.fromEntries(MODELS.map((model) => [`openai:${model}`, PRICE]))),
      PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2",
    },
  });
  await pushPrompts(server, server.tenantId, prompts());
  await addWebhookEnvironment(server, "hooks", receiver.url, ["run.requires_action", "run.completed"]);
  document = await fetchOpenApiDocument(server.url);
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server?.dispose();
  await router.close();
  receiver.stop();
  weather?.stop();
  mcp.stop();
});

const expectDocumented = (run: Run) => {
  const validate = responseValidator(document, "/api/v1/promptruns/{id}", "get", "200");
  expect(validate(run), JSON.stringify(validate.errors)).toBe(true);
};

/** The OpenAPI component of each SSE event's data (docs/TOOLS.md "Events"). */
const EVENT_COMPONENTS: Record<string, string> = {
  "run.started": "RunStartedEvent",
  "run.step": "RunStepEvent",
  "run.tool_call": "RunToolCallEvent",
  "run.tool_result": "RunToolResultEvent",
  "run.requires_action": "RunRequiresActionEvent",
  "run.token": "RunTokenEvent",
  "run.completed": "RunCompletedEvent",
  "run.failed": "RunFailedEvent",
};
const expectDocumentedEvents = (events: ReceivedEvent[], runId: string) => {
  for (const event of events.filter((received) => received.data.runId === runId)) {
    const validate = componentValidator(document, EVENT_COMPONENTS[event.event]!);
    expect(validate(event.data), `${event.event}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
};

const stream = async (thread: string) => {
  const opened = await openThreadStream(server, thread);
  streams.push(opened);
  return opened;
};

interface Step {
  index: number;
  model: string;
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  toolResults: Array<{
    toolCallId: string;
    name: string;
    output: unknown;
    isError: boolean;
    executedBy: string;
  }>;
  finishReason: string | null;
  usage: Record<string, number>;
  cost: { success: Record<string, number>; retries: Record<string, number>; total: number };
  startedAt: string;
  finishedAt: string;
}
const stepsOf = (run: Run) => run.steps as Step[];
const round = (value: number) => Math.round(value * 1e12) / 1e12;
/** The price of `input` prompt tokens and `output` completion tokens at PRICE. */
const priceOf = (input: number, output: number) =>
  round((input * PRICE.inputPerMillion + output * PRICE.outputPerMillion) / 1e6);

/** A caller answering its orders: tool results → an answer naming them; "thanks" → a reply; else a lookup. */
const orderScript = (request: Parameters<Parameters<ModelRouter["script"]>[1]>[0]) => {
  if (lastRole(request) === "tool") {
    const result = request.toolResults.at(-1)!;
    return answer(
      `Order status: ${typeof result.content === "string" ? result.content : JSON.stringify(result.content)}`,
    );
  }
  if (lastUserText(request).includes("thanks")) return answer("You are welcome.");
  const number = /[A-Z]-\d+/.exec(lastUserText(request))?.[0] ?? "A-0";
  return callTools([toolCall(`call_${number}`, "lookup_order", { number })]);
};
for (const model of ["orders", "orders-quick", "orders-twice"]) router.script(model, orderScript);

describe("server tools", () => {
  test("http: the model calls get_weather, the server calls the API, the model answers from its result; 2 steps, usage and cost per step", async () => {
    router.script("weather", (request) =>
      lastRole(request) === "tool"
        ? answer("It is 12 degrees and clear in Oslo.", { input: 180, output: 12 })
        : callTools([toolCall("call_w1", "get_weather", { city: "Oslo" })], { input: 120, output: 18 }),
    );
    const before = weather.received.length;
    const thread = crypto.randomUUID();
    const events = await stream(thread);
    const { id } = await createRun(server, "weather", { inputs: { message: "Weather in Oslo?" }, thread });
    await events.waitFor((event) => event.event === "run.completed" && event.data.runId === id);
    const run = await getRun(server, id);
    expectDocumented(run);
    expect(run).toMatchObject({
      status: "completed",
      output: "It is 12 degrees and clear in Oslo.",
      finishReason: "stop",
      phase: null,
      requiredAction: null,
    });

    // The server called the API once, with the model's argument in the query.
    expect(weather.received.slice(before).map((received) => received.target)).toEqual(["/weather?city=Oslo"]);
    const [first, second] = router.requestsFor("weather");
    expect(router.requestsFor("weather")).toHaveLength(2);
    expect(first!.tools).toEqual([
      {
        name: "get_weather",
        description: "Current weather of a city.",
        parameters: expect.objectContaining({ properties: cityParameters.properties }),
      },
    ]);
    // The second request replays the call and carries the API's answer as the tool result.
    expect(second!.toolCalls).toEqual([{ id: "call_w1", name: "get_weather", arguments: { city: "Oslo" } }]);
    expect(second!.toolResults).toHaveLength(1);
    expect(second!.toolResults[0]!.toolCallId).toBe("call_w1");
    expect(JSON.parse(String(second!.toolResults[0]!.content))).toEqual(weatherOf("Oslo"));

    const steps = stepsOf(run);
    expect(steps.map((step) => [step.index, step.finishReason, step.toolCalls.length])).toEqual([
      [0, "tool-calls", 1],
      [1, "stop", 0],
    ]);
    expect(steps[0]!.toolResults).toEqual([
      {
        toolCallId: "call_w1",
        name: "get_weather",
        output: weatherOf("Oslo"),
        isError: false,
        executedBy: "server",
      },
    ]);
    expect(steps[1]!.text).toBe("It is 12 degrees and clear in Oslo.");
    expect(steps[0]!.usage).toEqual({ input: 120, inputCached: 0, output: 18, reasoning: 0, total: 138 });
    expect(steps[1]!.usage).toEqual({ input: 180, inputCached: 0, output: 12, reasoning: 0, total: 192 });
    expect(run.tokenUsage).toEqual({ input: 300, inputCached: 0, output: 30, reasoning: 0, total: 330 });
    expect(round(steps[0]!.cost.success.total!)).toBe(priceOf(120, 18));
    expect(round(steps[1]!.cost.success.total!)).toBe(priceOf(180, 12));
    const cost = run.cost as { success: { total: number }; retries: { total: number }; total: number };
    expect(round(cost.total)).toBe(round(priceOf(120, 18) + priceOf(180, 12)));
    expect(cost.retries.total).toBe(0);
    for (const step of steps)
      expect(Date.parse(step.finishedAt)).toBeGreaterThanOrEqual(Date.parse(step.startedAt));
    expect(Date.parse(steps[1]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(steps[0]!.finishedAt));

    // SSE: the call when its step is stored, its result once the API answered, then step 1.
    expect(eventTrail(events.events, id)).toEqual([
      "run.started",
      "run.step",
      "run.tool_call",
      "run.tool_result",
      "run.step",
      "run.token…",
      "run.completed",
    ]);
    const byType = (type: string) =>
      events.events.find((event) => event.event === type && event.data.runId === id)!;
    expect(byType("run.tool_call").data).toEqual({
      runId: id,
      step: 0,
      toolCall: { id: "call_w1", name: "get_weather", arguments: { city: "Oslo" } },
    });
    expect(byType("run.tool_result").data).toEqual({
      runId: id,
      step: 0,
      toolCallId: "call_w1",
      name: "get_weather",
      isError: false,
    });
    expect(byType("run.completed").data).toMatchObject({ output: run.output, tokenUsage: run.tokenUsage });
    expectDocumentedEvents(events.events, id);
  });

  test("mcp: only the allowed tool is offered; the server calls it over MCP and closes the session", async () => {
    router.script("docs", (request) =>
      lastRole(request) === "tool"
        ? answer(`Docs say: ${request.toolResults[0]!.content}`)
        : callTools([toolCall("call_d1", "search_docs", { query: "refunds" })]),
    );
    const methodsBefore = mcp.methods.length;
    const { id } = await createRun(server, "docs", { inputs: { message: "How do refunds work?" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "Docs say: found 2 pages about refunds" });
    expectDocumented(await getRun(server, id));

    const [first] = router.requestsFor("docs");
    expect(first!.tools.map((tool) => tool.name)).toEqual(["search_docs"]);
    expect(first!.tools[0]!.description).toBe("Search the docs.");
    expect(stepsOf(run)[0]!.toolResults).toEqual([
      {
        toolCallId: "call_d1",
        name: "search_docs",
        output: "found 2 pages about refunds",
        isError: false,
        executedBy: "server",
      },
    ]);
    const methods = mcp.methods.slice(methodsBefore);
    expect(methods).toContain("initialize");
    expect(methods).toContain("tools/list");
    expect(methods.filter((method) => method === "tools/call")).toHaveLength(1);
    const calls = mcp.received.filter((received) => received.body.includes('"tools/call"'));
    expect(calls.every((received) => !received.body.includes("drop_tables"))).toBe(true);
    // The session is ended (DELETE) when the run's loop ends.
    const deadline = Date.now() + 5_000;
    while (mcp.deletes === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(mcp.deletes).toBeGreaterThanOrEqual(1);
  });

  test("two http calls in one step run in parallel: the API sees both before answering either", async () => {
    router.script("pair", (request) =>
      lastRole(request) === "tool"
        ? answer(request.toolResults.map((result) => JSON.parse(String(result.content)).city).join(" and "))
        : callTools([
            toolCall("call_p1", "get_weather", { city: "Paris" }),
            toolCall("call_p2", "get_weather", { city: "Rome" }),
          ]),
    );
    const { id } = await createRun(server, "pair", { inputs: { message: "Paris and Rome?" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "Paris and Rome" });
    const targets = weather.received.filter((received) => received.target.startsWith("/pair"));
    expect(targets.map((received) => received.target).sort()).toEqual([
      "/pair?city=Paris",
      "/pair?city=Rome",
    ]);
    expect(
      stepsOf(run)[0]!.toolResults.map((result) => [result.toolCallId, result.isError, result.output]),
    ).toEqual([
      ["call_p1", false, weatherOf("Paris")],
      ["call_p2", false, weatherOf("Rome")],
    ]);
    expect(router.requestsFor("pair")[1]!.toolResults.map((result) => result.toolCallId)).toEqual([
      "call_p1",
      "call_p2",
    ]);
  });

  test("a model that never stops calling tools fails with `max steps (3) reached` after 3 steps", async () => {
    let calls = 0;
    router.script("looper", () => callTools([toolCall(`call_l${++calls}`, "get_weather", { city: "Lima" })]));
    const before = weather.received.filter((received) => received.target.includes("Lima")).length;
    const { id } = await createRun(server, "looper", { inputs: { message: "again and again" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "failed", error: "max steps (3) reached", output: null });
    expectDocumented(await getRun(server, id));
    expect(stepsOf(run)).toHaveLength(3);
    expect(router.requestsFor("looper")).toHaveLength(3);
    // The first two steps' calls ran; the third asked with no model call left to hear the answer.
    expect(weather.received.filter((received) => received.target.includes("Lima")).length - before).toBe(2);
    // A failed run has no tokenUsage (docs/PRODUCT-RULES.md "Runs"); its cost counts every step.
    expect(run.tokenUsage).toBeNull();
    expect(stepsOf(run).map((step) => step.usage.total)).toEqual([120, 120, 120]);
    expect(round((run.cost as { total: number }).total)).toBe(round(3 * priceOf(100, 20)));
  });
});

describe("client tools over REST", () => {
  test("pause, SSE and webhook events, outputs, completion; memory shows the exchange and the next run sends it", async () => {
    const thread = crypto.randomUUID();
    const events = await stream(thread);
    const createdAt = Date.now();
    const { id } = await createRun(server, "orders", {
      inputs: { message: "Where is order A-17?" },
      thread,
      environment: "hooks",
    });
    await events.waitFor((event) => event.event === "run.requires_action" && event.data.runId === id);
    const paused = await waitForPause(server, id);
    expectDocumented(paused);
    const action = requiredActionOf(paused);
    expect(paused.status).toBe("pending");
    expect(action.type).toBe("submit_tool_outputs");
    expect(action.toolCalls).toEqual([
      { id: "call_A-17", name: "lookup_order", arguments: { number: "A-17" } },
    ]);
    // expiresAt: the pause + 600 s (the default toolTimeoutSeconds).
    const expiresIn = Date.parse(action.expiresAt) - createdAt;
    expect(expiresIn).toBeGreaterThan(595_000);
    expect(expiresIn).toBeLessThan(620_000);
    expect(stepsOf(paused)).toHaveLength(1);
    expect(stepsOf(paused)[0]!.toolResults).toEqual([]);
    const requiresAction = events.events.find((event) => event.event === "run.requires_action")!;
    expect(requiresAction.data).toEqual({ runId: id, requiredAction: action });
    expect(eventTrail(events.events, id)).toEqual([
      "run.started",
      "run.step",
      "run.tool_call",
      "run.requires_action",
    ]);

    const submitted = await submitToolOutputs(server, id, [
      { toolCallId: "call_A-17", output: { status: "shipped", carrier: "DHL" } },
    ]);
    expect(submitted.status).toBe(202);
    const accepted = await submitted.json();
    expect(accepted).toEqual({ id, thread });
    expect(submitted.headers.get("location")).toBe(`/api/v1/promptruns/${id}`);
    const validate202 = responseValidator(document, "/api/v1/promptruns/{id}/tool-outputs", "post", "202");
    expect(validate202(accepted), JSON.stringify(validate202.errors)).toBe(true);

    await events.waitFor((event) => event.event === "run.completed" && event.data.runId === id);
    const run = await getRun(server, id);
    expectDocumented(run);
    expect(run).toMatchObject({
      status: "completed",
      output: 'Order status: {"status":"shipped","carrier":"DHL"}',
      phase: null,
      requiredAction: null,
    });
    expect(stepsOf(run)[0]!.toolResults).toEqual([
      {
        toolCallId: "call_A-17",
        name: "lookup_order",
        output: { status: "shipped", carrier: "DHL" },
        isError: false,
        executedBy: "client",
      },
    ]);
    expect(eventTrail(events.events, id)).toEqual([
      "run.started",
      "run.step",
      "run.tool_call",
      "run.requires_action",
      "run.tool_result",
      "run.step",
      "run.token…",
      "run.completed",
    ]);
    const stepEvents = events.events.filter((event) => event.event === "run.step" && event.data.runId === id);
    expect(stepEvents.map((event) => event.data.step)).toEqual([0, 1]);
    expectDocumentedEvents(events.events, id);
    // Token indexes go on counting from 0 (step 0 streamed no text).
    const indexes = events.events
      .filter((event) => event.event === "run.token" && event.data.runId === id)
      .map((event) => event.data.index);
    expect(indexes).toEqual(indexes.map((_, index) => index));
    // The model's second request carries the caller's output.
    const [, second] = router.requestsFor("orders");
    expect(second!.toolResults).toEqual([
      { toolCallId: "call_A-17", content: '{"status":"shipped","carrier":"DHL"}' },
    ]);

    // Webhooks: the pause, then the completion, each once.
    const deadline = Date.now() + 10_000;
    while (receiver.of(id).length < 2 && Date.now() < deadline) await Bun.sleep(25);
    const deliveries = receiver.of(id);
    expect(deliveries.map((delivery) => delivery.type)).toEqual(["run.requires_action", "run.completed"]);
    expect(deliveries[0]!.data).toMatchObject({
      status: "pending",
      phase: "requires_action",
      requiredAction: action,
    });
    expect(deliveries[1]!.data).toMatchObject({ status: "completed", output: run.output });
    for (const [delivery, component] of [
      [deliveries[0]!, "RunRequiresActionWebhook"],
      [deliveries[1]!, "RunCompletedWebhook"],
    ] as const) {
      const validate = componentValidator(document, component);
      expect(validate(delivery.payload), JSON.stringify(validate.errors)).toBe(true);
    }

    // Thread memory: the user message, the assistant's call, the tool's result, the answer.
    const page = await api(server, `/api/v1/threads/${thread}/messages`);
    expect(page.status).toBe(200);
    const messages = (await page.json()) as { items: Array<Record<string, unknown>> };
    const validatePage = responseValidator(document, "/api/v1/threads/{thread}/messages", "get", "200");
    expect(validatePage(messages), JSON.stringify(validatePage.errors)).toBe(true);
    expect(messages.items.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages.items[0]).toMatchObject({ runId: id, content: "Where is order A-17?" });
    expect(messages.items[1]!.parts).toEqual([
      { type: "tool-call", toolCallId: "call_A-17", name: "lookup_order", arguments: { number: "A-17" } },
    ]);
    expect(messages.items[2]!.parts).toEqual([
      {
        type: "tool-result",
        toolCallId: "call_A-17",
        name: "lookup_order",
        output: { status: "shipped", carrier: "DHL" },
        isError: false,
      },
    ]);
    expect(messages.items[3]).toMatchObject({ runId: id, content: run.output });

    // The channel's next run sends the whole exchange to the model.
    const next = await createRun(server, "orders", { inputs: { message: "thanks" }, thread });
    expect(await waitForRun(server, next.id)).toMatchObject({
      status: "completed",
      output: "You are welcome.",
    });
    const third = router.requestsFor("orders").at(-1)!;
    expect(third.toolCalls).toEqual([
      { id: "call_A-17", name: "lookup_order", arguments: { number: "A-17" } },
    ]);
    expect(third.toolResults).toEqual([
      { toolCallId: "call_A-17", content: '{"status":"shipped","carrier":"DHL"}' },
    ]);
    expect(
      (third.body as { messages: Array<{ role: string }> }).messages.map((message) => message.role),
    ).toEqual(["user", "assistant", "tool", "assistant", "user"]);
  });

  test("a pause that expires fails the run with its expiresAt, and the channel's next run proceeds", async () => {
    const thread = crypto.randomUUID();
    const { id } = await createRun(server, "orders-quick", { inputs: { message: "Where is B-2?" }, thread });
    const paused = await waitForPause(server, id);
    const { expiresAt } = requiredActionOf(paused);
    const pausedAt = Date.parse(stepsOf(paused)[0]!.finishedAt);
    expect(Date.parse(expiresAt) - pausedAt).toBeGreaterThanOrEqual(900);
    expect(Date.parse(expiresAt) - pausedAt).toBeLessThan(2_000);

    // The same (thread, channel): waits behind the paused run.
    const next = await createRun(server, "plain", { inputs: { message: "still there?" }, thread });
    expect(await getRun(server, next.id)).toMatchObject({
      status: "pending",
      phase: "queued",
      startedAt: null,
    });

    const failed = await waitForRun(server, id, 10_000);
    expect(failed).toMatchObject({
      status: "failed",
      error: `tool outputs were not submitted before ${expiresAt}`,
      phase: null,
      requiredAction: null,
    });
    expectDocumented(await getRun(server, id));
    const proceeded = await waitForRun(server, next.id, 10_000);
    expect(proceeded).toMatchObject({ status: "completed", output: "still there?" });
    expect(Date.parse(String(proceeded.startedAt))).toBeGreaterThanOrEqual(
      Date.parse(String(failed.finishedAt)),
    );

    const late = await submitToolOutputs(server, id, [{ toolCallId: "call_B-2", output: "late" }]);
    expect(await errorOf(late)).toEqual({
      status: 409,
      error: "run is failed, not waiting for tool outputs",
    });
    expect(router.requestsFor("orders-quick")).toHaveLength(1);
  });

  test("outputs submitted twice continue the run once: 409 for the second, the same 202 for a replayed Idempotency-Key", async () => {
    const thread = crypto.randomUUID();
    const events = await stream(thread);
    const { id } = await createRun(server, "orders-twice", { inputs: { message: "Where is C-3?" }, thread });
    await waitForPause(server, id);
    const outputs = [{ toolCallId: "call_C-3", output: "delivered" }];

    const first = await submitToolOutputs(server, id, outputs, { idempotencyKey: "outputs-C-3" });
    expect(first.status).toBe(202);
    const firstBody = await first.json();
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const again = await submitToolOutputs(server, id, outputs);
    const refused = await errorOf(again);
    expect(refused.status).toBe(409);
    expect(refused.error).toMatch(/not waiting for tool outputs|answered meanwhile/);

    const replay = await submitToolOutputs(server, id, outputs, { idempotencyKey: "outputs-C-3" });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toEqual(firstBody);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    const reused = await submitToolOutputs(server, id, [{ toolCallId: "call_C-3", output: "lost" }], {
      idempotencyKey: "outputs-C-3",
    });
    expect((await errorOf(reused)).status).toBe(409);

    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "Order status: delivered" });
    await events.waitFor((event) => event.event === "run.completed" && event.data.runId === id);
    await Bun.sleep(500);
    expect(
      events.events.filter((event) => event.event === "run.completed" && event.data.runId === id),
    ).toHaveLength(1);
    expect(router.requestsFor("orders-twice")).toHaveLength(2);
    expect(stepsOf(run)[0]!.toolResults).toHaveLength(1);
    const [row] = await server.sql<{ n: number | string }>(
      "select count(*) as n from messages where run_id = ?",
      [id],
    );
    expect(Number(row!.n)).toBe(4);
  });

  test("two submissions at once: one 202, one 409, one continuation", async () => {
    const { id } = await createRun(server, "orders-twice", { inputs: { message: "Where is D-4?" } });
    await waitForPause(server, id);
    const before = router.requestsFor("orders-twice").length;
    const answers = await Promise.all(
      ["first", "second"].map((output) =>
        submitToolOutputs(server, id, [{ toolCallId: "call_D-4", output }]),
      ),
    );
    expect(answers.map((response) => response.status).sort()).toEqual([202, 409]);
    const winner = answers[0]!.status === 202 ? "first" : "second";
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: `Order status: ${winner}` });
    expect(router.requestsFor("orders-twice").length - before).toBe(1);
  });

  test("cancel while paused: the run fails `cancelled`, the channel's next run proceeds, late outputs get 409", async () => {
    const thread = crypto.randomUUID();
    const { id } = await createRun(server, "orders-twice", { inputs: { message: "Where is E-5?" }, thread });
    await waitForPause(server, id);
    const next = await createRun(server, "plain", { inputs: { message: "after the cancel" }, thread });
    const modelCalls = router.requestsFor("orders-twice").length;
    const cancelled = await api(server, `/api/v1/promptruns/${id}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ id, status: "failed", error: "cancelled", phase: null });
    expect(await waitForRun(server, next.id)).toMatchObject({
      status: "completed",
      output: "after the cancel",
    });
    const late = await submitToolOutputs(server, id, [{ toolCallId: "call_E-5", output: "late" }]);
    expect(await errorOf(late)).toEqual({
      status: 409,
      error: "run is failed, not waiting for tool outputs",
    });
    const run = await getRun(server, id);
    expectDocumented(run);
    expect(run).toMatchObject({ status: "failed", error: "cancelled", requiredAction: null });
    expect(router.requestsFor("orders-twice")).toHaveLength(modelCalls);
  });

  test("keyless dev:echo: the demo order-status prompt pauses on /call lookup_order and answers with the output", async () => {
    const { id } = await createRun(server, "order-status", {
      inputs: { message: '/call lookup_order {"number":"A-1001"}' },
    });
    const paused = await waitForPause(server, id);
    expectDocumented(paused);
    expect(requiredActionOf(paused).toolCalls).toEqual([
      { id: "call_1", name: "lookup_order", arguments: { number: "A-1001" } },
    ]);
    const output = { number: "A-1001", status: "shipped", eta: "2025-06-02" };
    const submitted = await submitToolOutputs(server, id, [{ toolCallId: "call_1", output }]);
    expect(submitted.status).toBe(202);
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: JSON.stringify(output), finishReason: "stop" });
    expect(stepsOf(run).map((step) => step.model)).toEqual(["dev:echo", "dev:echo"]);
    expectDocumented(await getRun(server, id));
  });
});
