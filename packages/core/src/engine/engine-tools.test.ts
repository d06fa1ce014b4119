import { afterEach, describe, expect, test } from "bun:test";
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import type { PromptFileInput } from "@promptrun/contract";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { RunRecord } from "../ports.ts";
import { startFakeAnthropic, startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createEngineFixture, type EngineFixture, type FixtureOptions } from "./engine-test-fixture.ts";
import { withLastStep, withResults } from "./run-steps.ts";

const fixtures: EngineFixture[] = [];
const servers: Array<{ stop: (force?: boolean) => void }> = [];
afterEach(async () => {
  for (const fixture of fixtures.splice(0)) await fixture.close();
  for (const server of servers.splice(0)) server.stop(true);
});

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

const answer = (text: string): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  ...text.split(/(?<= )/).map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t", delta })),
  { type: "text-end", id: "t" },
  { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(20, 3) },
];

const callTools = (
  ...calls: Array<{ id: string; name: string; input: unknown }>
): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  ...calls.map(
    (call): LanguageModelV4StreamPart => ({
      type: "tool-call",
      toolCallId: call.id,
      toolName: call.name,
      input: typeof call.input === "string" ? call.input : JSON.stringify(call.input),
    }),
  ),
  { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: usage(10, 5) },
];

const lastMessage = (prompt: LanguageModelV4Prompt) => prompt[prompt.length - 1]!;

/** The tool results of the call's last message, as `name=output` (output JSON unless text). */
const toolResultsIn = (options: LanguageModelV4CallOptions): string[] => {
  const last = lastMessage(options.prompt);
  if (last.role !== "tool") return [];
  return last.content.flatMap((part) =>
    part.type === "tool-result" && "value" in part.output
      ? [
          `${part.toolName}=${typeof part.output.value === "string" ? part.output.value : JSON.stringify(part.output.value)}`,
        ]
      : [],
  );
};

/** A model answering by script: `reply(options, callIndex)` gives the parts of each call. */
function scriptedModel(
  reply: (options: LanguageModelV4CallOptions, call: number) => LanguageModelV4StreamPart[],
) {
  let calls = 0;
  return new MockLanguageModelV4({
    doStream: async (options) => ({ stream: simulateReadableStream({ chunks: reply(options, calls++) }) }),
  });
}

const functionTool = {
  type: "function",
  name: "lookup_order",
  description: "Look an order up.",
  parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
} as const;

async function fixtureWith(
  model: MockLanguageModelV4,
  prompt: Partial<PromptFileInput>,
  options: Omit<FixtureOptions, "prompt"> = {},
) {
  const fixture = await createEngineFixture({
    ...options,
    prompt,
    engine: { models: { resolve: async () => ({ model, provider: "mock", modelId: "m", secrets: [] }) } },
  });
  fixtures.push(fixture);
  await fixture.engine.start();
  return fixture;
}

async function waitForPause(fixture: EngineFixture, runId: string, timeoutMs = 5_000): Promise<RunRecord> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const run = await fixture.store.runs.getById(runId);
    if (run?.pause) return run;
    if (run && run.status !== "pending") throw new Error(`run ended ${run.status}: ${run.error}`);
    await Bun.sleep(5);
  }
  throw new Error(`run ${runId} did not pause`);
}

/** What the service does on tool outputs: the results into the paused step, then resume. */
async function submit(fixture: EngineFixture, run: RunRecord, outputs: Record<string, unknown>) {
  const pause = run.pause!;
  const step = run.steps.at(-1)!;
  const results = pause.requiredAction.toolCalls.map((call) => ({
    toolCallId: call.id,
    name: call.name,
    output: outputs[call.id],
    isError: false,
    executedBy: "client" as const,
  }));
  const steps = withLastStep(run.steps, withResults(step, results));
  expect(await fixture.store.runs.resume(run.id, { step: pause.step, steps })).toBe(true);
  fixture.engine.resume((await fixture.store.runs.getById(run.id))!);
}

function startWeather(): { url: string; requests: string[] } {
  const requests: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const city = new URL(request.url).searchParams.get("city") ?? "?";
      requests.push(city);
      return Response.json({ city, temperature: city.length });
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, requests };
}

describe("engine tool loop", () => {
  test("a function tool pauses the run without holding a slot; outputs continue it to a second step", async () => {
    const model = scriptedModel((options) =>
      lastMessage(options.prompt).role === "tool"
        ? answer(`order says ${toolResultsIn(options).join(",")}`)
        : callTools({ id: "call_1", name: "lookup_order", input: { number: "A-1" } }),
    );
    const fixture = await fixtureWith(model, { tools: [functionTool] }, { config: { concurrency: 1 } });
    const thread = Bun.randomUUIDv7();
    const run = await fixture.createRun({ thread });
    const paused = await waitForPause(fixture, run.id);
    expect(paused.status).toBe("pending");
    expect(paused.pause!.requiredAction.toolCalls).toEqual([
      { id: "call_1", name: "lookup_order", arguments: { number: "A-1" } },
    ]);
    expect(paused.steps).toHaveLength(1);
    expect(paused.steps[0]!.finishReason).toBe("tool-calls");
    expect(model.doStreamCalls[0]!.tools?.map((tool) => tool.name)).toEqual(["lookup_order"]);

    // The paused run holds no slot (concurrency 1): another channel's run executes meanwhile,
    // while a later run of the paused run's channel waits behind it.
    const sameChannel = await fixture.createRun({ thread });
    const other = await fixture.createRun();
    expect((await waitForPause(fixture, other.id)).steps).toHaveLength(1);
    expect((await fixture.store.runs.getById(sameChannel.id))!.startedAt).toBeNull();

    await submit(fixture, paused, { call_1: { status: "shipped" } });
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe('order says lookup_order={"status":"shipped"}');
    expect(ended.steps.map((step) => step.toolCalls.length)).toEqual([1, 0]);
    expect(ended.steps[0]!.toolResults[0]!.executedBy).toBe("client");
    expect(ended.tokenUsage).toEqual({ input: 30, inputCached: 0, output: 8, reasoning: 0, total: 38 });
    expect(ended.pause).toBeNull();

    const events = fixture.eventsOf(run.id).map((delivered) => delivered.event.type);
    expect(events.filter((type) => type === "run.step")).toHaveLength(2);
    expect(events).toContain("run.tool_call");
    expect(events).toContain("run.requires_action");
    // The caller's output is announced once accepted, before the next step starts.
    expect(events.indexOf("run.tool_result")).toBeGreaterThan(events.indexOf("run.requires_action"));
    expect(events.lastIndexOf("run.step")).toBeGreaterThan(events.indexOf("run.tool_result"));
    expect(events.filter((type) => type === "run.started")).toHaveLength(1);
    expect(events.at(-1)).toBe("run.completed");
    // Token indexes go on across steps (step 0 sent none; step 1 from 0 on).
    const indexes = fixture
      .eventsOf(run.id)
      .flatMap((delivered) => (delivered.event.type === "run.token" ? [delivered.event.data.index] : []));
    expect(indexes).toEqual(indexes.map((_, index) => index));

    // The channel's next run went after it, and saw the whole tool exchange in its memory.
    await waitForPause(fixture, sameChannel.id);
    const nextCall = model.doStreamCalls.at(-1);
    expect(nextCall?.prompt.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
  });

  test("http tools run on the server, two in one step, and the model gets both results", async () => {
    const weather = startWeather();
    const model = scriptedModel((options) =>
      lastMessage(options.prompt).role === "tool"
        ? answer(toolResultsIn(options).join(" | "))
        : callTools(
            { id: "a", name: "get_weather", input: { city: "Oslo" } },
            { id: "b", name: "get_weather", input: { city: "Rome" } },
          ),
    );
    const fixture = await fixtureWith(model, {
      tools: [
        {
          type: "http",
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          request: { method: "GET", url: `${weather.url}/weather?city={{args.city}}` },
        },
      ],
    });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(weather.requests.sort()).toEqual(["Oslo", "Rome"]);
    expect(ended.output).toBe(
      'get_weather={"city":"Oslo","temperature":4} | get_weather={"city":"Rome","temperature":4}',
    );
    expect(
      ended.steps[0]!.toolResults.map((result) => [result.toolCallId, result.executedBy, result.isError]),
    ).toEqual([
      ["a", "server", false],
      ["b", "server", false],
    ]);
    const results = fixture
      .eventsOf(ended.id)
      .filter((delivered) => delivered.event.type === "run.tool_result");
    expect(results).toHaveLength(2);
  });

  test("a call to an undeclared tool or with bad arguments is an error result the model sees", async () => {
    const model = scriptedModel((options, call) =>
      call === 0
        ? callTools(
            { id: "x", name: "launch_rockets", input: {} },
            { id: "y", name: "lookup_order", input: "{not json" },
            { id: "z", name: "lookup_order", input: { number: 7 } },
          )
        : answer(toolResultsIn(options).length === 3 ? "understood" : "missing"),
    );
    const fixture = await fixtureWith(model, { tools: [functionTool] });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("understood");
    const results = ended.steps[0]!.toolResults;
    expect(results.map((result) => result.isError)).toEqual([true, true, true]);
    expect(results[0]!.output).toBe("the prompt has no tool named 'launch_rockets'");
    expect(results[1]!.output).toBe("the arguments are not a JSON object");
    expect(results[2]!.output).toBe(
      "arguments do not match the parameters of lookup_order: /number: must be string",
    );
  });

  test("a model that keeps calling tools fails the run at maxSteps, each step costed", async () => {
    const weather = startWeather();
    const model = scriptedModel(() =>
      callTools({ id: `c${Math.random()}`, name: "get_weather", input: { city: "Oslo" } }),
    );
    const fixture = await fixtureWith(model, {
      maxSteps: 3,
      tools: [
        {
          type: "http",
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
          request: { url: `${weather.url}/?city={{args.city}}` },
        },
      ],
    });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("max steps (3) reached");
    expect(ended.steps).toHaveLength(3);
    expect(model.doStreamCalls).toHaveLength(3);
    // Two steps' tools ran; the third asked again with no call left to answer it.
    expect(weather.requests).toHaveLength(2);
  });

  test("a pause that expires fails the run and frees its channel", async () => {
    const model = scriptedModel((options) =>
      lastMessage(options.prompt).role === "tool"
        ? answer("done")
        : callTools({ id: "c", name: "lookup_order", input: { number: "1" } }),
    );
    const fixture = await fixtureWith(
      model,
      { tools: [functionTool], toolTimeoutSeconds: 1 },
      { config: { tools: { timeoutMs: 5_000, maxResponseBytes: 1_000_000, pauseSweepMs: 50 } } },
    );
    const thread = Bun.randomUUIDv7();
    const run = await fixture.createRun({ thread });
    const paused = await waitForPause(fixture, run.id);
    const next = await fixture.createRun({ thread });
    const ended = await fixture.waitForEnd(run.id, 5_000);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      `tool outputs were not submitted before ${paused.pause!.expiresAt.toISOString()}`,
    );
    expect(ended.steps).toHaveLength(1);
    // Its channel's next run goes on (and pauses in turn).
    expect((await waitForPause(fixture, next.id)).pause).not.toBeNull();
  });

  test("cancel ends a paused run and frees its channel", async () => {
    const model = scriptedModel(() => callTools({ id: "c", name: "lookup_order", input: { number: "1" } }));
    const fixture = await fixtureWith(model, { tools: [functionTool] });
    const thread = Bun.randomUUIDv7();
    const run = await fixture.createRun({ thread });
    await waitForPause(fixture, run.id);
    const next = await fixture.createRun({ thread });
    expect(await fixture.engine.cancel(run.id)).toBe(true);
    expect((await fixture.store.runs.getById(run.id))!.error).toBe("cancelled");
    await waitForPause(fixture, next.id);
  });

  test("a paused run survives a restart, and the step it stored is not sent again", async () => {
    const model = scriptedModel((options) =>
      lastMessage(options.prompt).role === "tool"
        ? answer("after restart")
        : callTools({ id: "c", name: "lookup_order", input: { number: "1" } }),
    );
    const first = await fixtureWith(model, { tools: [functionTool] });
    const thread = Bun.randomUUIDv7();
    const run = await first.createRun({ thread });
    const paused = await waitForPause(first, run.id);
    const waiting = await first.createRun({ thread });
    await first.engine.stop({ graceMs: 0 });

    const second = await fixtureWith(model, { tools: [functionTool] }, { store: first.store });
    // Held at start: the channel's next run does not overtake the paused one.
    await Bun.sleep(100);
    expect((await second.store.runs.getById(waiting.id))!.startedAt).toBeNull();
    expect(model.doStreamCalls).toHaveLength(1);
    await submit(second, paused, { c: "ok" });
    expect((await second.waitForEnd(run.id)).output).toBe("after restart");
    // The second call is the run's next step, with the stored one as history (not sent as new).
    expect(lastMessage(model.doStreamCalls[1]!.prompt).role).toBe("tool");
  });
});

describe("tool loop against wire-level providers", () => {
  const providerCases = [
    {
      name: "OpenAI",
      start: startFakeOpenAI,
      model: "openai:gpt-4o-mini",
      config: (baseUrl: string) => ({
        openai: { apiKey: "sk-test", baseUrl },
        anthropic: {},
        compatible: [],
      }),
    },
    {
      name: "Anthropic",
      start: startFakeAnthropic,
      model: "anthropic:claude-sonnet-4-5",
      config: (baseUrl: string) => ({
        openai: {},
        anthropic: { apiKey: "sk-ant-test", baseUrl },
        compatible: [],
      }),
    },
  ];
  for (const provider of providerCases) {
    test(`${provider.name}: tools and tool choice are sent, the call pauses, and the outputs go back as tool results`, async () => {
      const upstream = provider.start([
        {
          type: "stream",
          tokens: ["Let me look. "],
          toolCalls: [{ id: "call_a", name: "lookup_order", arguments: { number: "A-7" } }],
        },
        { type: "stream", tokens: ["It ", "shipped."] },
      ]);
      servers.push({ stop: () => void upstream.close() });
      const fixture = await createEngineFixture({
        prompt: { model: provider.model, tools: [functionTool], toolChoice: "required" },
        config: { providers: provider.config(upstream.baseUrl) },
      });
      fixtures.push(fixture);
      await fixture.engine.start();
      const run = await fixture.createRun();
      const paused = await waitForPause(fixture, run.id);
      expect(paused.steps[0]!.text).toBe("Let me look. ");
      expect(paused.pause!.requiredAction.toolCalls).toEqual([
        { id: "call_a", name: "lookup_order", arguments: { number: "A-7" } },
      ]);
      const first = upstream.requests[0]!;
      expect(first.tools.map((tool) => tool.name)).toEqual(["lookup_order"]);
      expect(first.tools[0]!.parameters).toMatchObject(functionTool.parameters);
      expect(JSON.stringify(first.toolChoice)).toMatch(provider.name === "OpenAI" ? /required/ : /any/);

      await submit(fixture, paused, { call_a: "shipped on Monday" });
      const ended = await fixture.waitForEnd(run.id);
      expect(ended.output).toBe("It shipped.");
      const second = upstream.requests[1]!;
      expect(second.toolCalls).toEqual([
        { id: "call_a", name: "lookup_order", arguments: { number: "A-7" } },
      ]);
      expect(JSON.stringify(second.toolResults[0]!.content)).toContain("shipped on Monday");
      expect(second.toolResults[0]!.toolCallId).toBe("call_a");
      expect(ended.steps.map((step) => step.finishReason)).toEqual(["tool-calls", "stop"]);
      expect(ended.tokenUsage!.total).toBe(ended.steps[0]!.usage.total + ended.steps[1]!.usage.total);
      expect(ended.cost!.success.total).toBeCloseTo(
        ended.steps[0]!.cost.total + ended.steps[1]!.cost.total,
        12,
      );
    });
  }
});
