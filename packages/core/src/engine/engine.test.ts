import { afterEach, describe, expect, test } from "bun:test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { FakeProviderServer } from "../testing/fake-providers/index.ts";
import { startFakeAnthropic, startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createEngineFixture, type EngineFixture, sentMessages } from "./engine-test-fixture.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const track = <T extends FakeProviderServer | EngineFixture>(resource: T): T => {
  cleanups.push(() => resource.close());
  return resource;
};

const openAIConfig = (server: FakeProviderServer) => ({
  providers: { openai: { apiKey: "sk-server-key", baseUrl: server.baseUrl }, anthropic: {}, compatible: [] },
});

describe("engine with real AI SDK providers against wire-level fakes", () => {
  test("OpenAI: streams tokens, then completes with usage (cached, reasoning) and cost", async () => {
    const openai = track(
      startFakeOpenAI({
        type: "stream",
        tokens: ["Hel", "lo", " there"],
        usage: { input: 1_000, cachedInput: 400, output: 300, reasoning: 120 },
      }),
    );
    const fixture = track(await createEngineFixture({ config: openAIConfig(openai) }));
    await fixture.engine.start();
    const run = await fixture.createRun({ inputs: { message: "hi" } });
    const ended = await fixture.waitForEnd(run.id);

    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("Hello there");
    expect(ended.attempts).toBe(1);
    expect(ended.tokenUsage).toEqual({
      input: 1000,
      inputCached: 400,
      output: 300,
      reasoning: 120,
      total: 1300,
    });
    // gpt-4o-mini: $0.15/M input, $0.075/M cached, $0.60/M output.
    expect(ended.cost?.success).toEqual({
      input: 0.00009,
      cachedInput: 0.00003,
      output: 0.00018,
      webSearch: 0,
      total: 0.0003,
      priced: true,
    });
    expect(ended.cost?.retries.total).toBe(0);
    expect(ended.cost?.total).toBe(0.0003);

    const request = openai.requests[0]!;
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe("Bearer sk-server-key");
    expect(sentMessages(request.body)).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "hi" },
    ]);
    expect(request.body).toMatchObject({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
    });

    // Event sequence on the bus: started, its one step, tokens (concatenating to the output), completed.
    const events = fixture.eventsOf(run.id).map((delivered) => delivered.event);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "run.step",
      "run.token",
      "run.token",
      "run.token",
      "run.completed",
    ]);
    expect(events[0]).toEqual({
      type: "run.started",
      data: {
        runId: run.id,
        thread: run.threadId,
        channel: "default",
        prompt: { slug: "chat", version: 1 },
        attempt: 1,
      },
    });
    const tokens = events.flatMap((event) => (event.type === "run.token" ? [event.data] : []));
    expect(tokens.map((token) => token.index)).toEqual([0, 1, 2]);
    expect(tokens.map((token) => token.delta).join("")).toBe(ended.output!);
    const completed = events.at(-1)!;
    expect(completed.type === "run.completed" && completed.data).toEqual({
      runId: run.id,
      output: "Hello there",
      outputJson: null,
      finishReason: "stop",
      tokenUsage: ended.tokenUsage!,
      cost: ended.cost!,
      finishedAt: ended.finishedAt!.toISOString(),
      memory: { messages: 0, dropped: 0 },
    });
  });

  test("Anthropic: usage with cache reads and thinking tokens, system prompt sent apart", async () => {
    const anthropic = track(
      startFakeAnthropic({
        type: "stream",
        tokens: ["Bonjour", "!"],
        usage: { input: 2_000, cachedInput: 1_500, output: 100, reasoning: 40 },
      }),
    );
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "anthropic:claude-sonnet-4-5" },
        config: {
          providers: {
            openai: {},
            anthropic: { apiKey: "anthropic-server-key", baseUrl: anthropic.baseUrl },
            compatible: [],
          },
        },
      }),
    );
    await fixture.engine.start();
    const run = await fixture.createRun({ inputs: { message: "salut" } });
    const ended = await fixture.waitForEnd(run.id);

    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("Bonjour!");
    expect(ended.tokenUsage).toEqual({
      input: 2000,
      inputCached: 1500,
      output: 100,
      reasoning: 40,
      total: 2100,
    });
    // claude-sonnet-4-5: $3/M input, $0.30/M cache read, $15/M output.
    expect(ended.cost?.success).toEqual({
      input: 0.0015,
      cachedInput: 0.00045,
      output: 0.0015,
      webSearch: 0,
      total: 0.00345,
      priced: true,
    });
    const request = anthropic.requests[0]!;
    expect(request.path).toBe("/v1/messages");
    expect(request.headers["x-api-key"]).toBe("anthropic-server-key");
    expect(sentMessages(request.body)).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "salut" },
    ]);
  });

  test("dev:echo streams the message back word by word at $0", async () => {
    const fixture = track(await createEngineFixture({ prompt: { model: "dev:echo" } }));
    await fixture.engine.start();
    const run = await fixture.createRun({ inputs: { message: "  echo  these words " } });
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.output).toBe("  echo  these words ");
    // input: "You are terse." (3 words) + the message (3 words)
    expect(ended.tokenUsage).toEqual({ input: 6, inputCached: 0, output: 3, reasoning: 0, total: 9 });
    expect(ended.cost?.total).toBe(0);
    expect(ended.cost?.success.priced).toBe(true);
    const deltas = fixture
      .eventsOf(run.id)
      .flatMap((delivered) => (delivered.event.type === "run.token" ? [delivered.event.data.delta] : []));
    expect(deltas).toEqual(["  ", "echo  ", "these ", "words "]);
  });

  test("an OpenAI-compatible endpoint without a known price is costed priced: false", async () => {
    const local = track(startFakeOpenAI({ type: "stream", tokens: ["ok"], usage: { input: 5, output: 1 } }));
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "local-llm:llama3.2:1b" },
        config: {
          providers: {
            openai: {},
            anthropic: {},
            compatible: [{ name: "local-llm", baseUrl: local.baseUrl }],
          },
        },
      }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.cost?.success).toEqual({
      input: 0,
      cachedInput: 0,
      output: 0,
      webSearch: 0,
      total: 0,
      priced: false,
    });
    expect(local.requests[0]!.body).toMatchObject({
      model: "llama3.2:1b",
      stream_options: { include_usage: true },
    });
    expect(local.requests[0]!.headers.authorization).toBeUndefined();
  });

  test("multi-turn memory: a channel carries its conversation, another channel does not see it", async () => {
    const openai = track(
      startFakeOpenAI((request) => ({ type: "stream", tokens: [`answer ${request.index + 1}`] })),
    );
    const fixture = track(await createEngineFixture({ config: openAIConfig(openai) }));
    await fixture.engine.start();
    const thread = Bun.randomUUIDv7();
    const first = await fixture.createRun({ thread, inputs: { message: "question 1" } });
    const second = await fixture.createRun({ thread, inputs: { message: "question 2" } });
    const third = await fixture.createRun({ thread, inputs: { message: "question 3" } });
    for (const run of [first, second, third])
      expect((await fixture.waitForEnd(run.id)).status).toBe("completed");
    const other = await fixture.createRun({ thread, channel: "side", inputs: { message: "aside" } });
    await fixture.waitForEnd(other.id);

    expect(sentMessages(openai.requests[2]!.body)).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "question 1" },
      { role: "assistant", content: "answer 1" },
      { role: "user", content: "question 2" },
      { role: "assistant", content: "answer 2" },
      { role: "user", content: "question 3" },
    ]);
    expect(sentMessages(openai.requests[3]!.body)).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "aside" },
    ]);
  });

  test("memory is read within config.memory: only the newest whole exchanges that fit", async () => {
    const openai = track(
      startFakeOpenAI((request) => ({ type: "stream", tokens: [`answer ${request.index + 1}`] })),
    );
    const fixture = track(
      await createEngineFixture({
        config: { ...openAIConfig(openai), memory: { maxMessages: 3, maxBytes: 1_000_000 } },
      }),
    );
    await fixture.engine.start();
    const thread = Bun.randomUUIDv7();
    const runs = [];
    for (const message of ["question 1", "question 2", "question 3"])
      runs.push(await fixture.createRun({ thread, inputs: { message } }));
    for (const run of runs) expect((await fixture.waitForEnd(run.id)).status).toBe("completed");
    expect(sentMessages(openai.requests[2]!.body)).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "question 2" },
      { role: "assistant", content: "answer 2" },
      { role: "user", content: "question 3" },
    ]);
  });

  test("runs of one channel execute one after the other; channels run side by side", async () => {
    let releaseFirst: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const openai = track(
      startFakeOpenAI((request) => {
        const message = sentMessages(request.body).at(-1)?.content;
        // The first run of channel "a" is held open until the other channel's request arrives.
        return message === "a1"
          ? { type: "stream", tokens: ["x"], holdBeforeFinish: firstHeld }
          : { type: "stream", tokens: ["y"] };
      }),
    );
    const fixture = track(await createEngineFixture({ config: openAIConfig(openai) }));
    await fixture.engine.start();
    const thread = Bun.randomUUIDv7();
    const a1 = await fixture.createRun({ thread, channel: "a", inputs: { message: "a1" } });
    const a2 = await fixture.createRun({ thread, channel: "a", inputs: { message: "a2" } });
    const b1 = await fixture.createRun({ thread, channel: "b", inputs: { message: "b1" } });
    await openai.waitForRequests(2);
    const arrived = () => openai.requests.map((request) => sentMessages(request.body).at(-1)?.content);
    // b1 reached the provider while a1 was still streaming; a2 waited.
    expect(arrived()).toEqual(["a1", "b1"]);
    expect(openai.streams[0]!.outcome).toBeNull();
    releaseFirst();
    for (const run of [a1, a2, b1]) expect((await fixture.waitForEnd(run.id)).status).toBe("completed");
    const a1Stream = openai.streams.find((stream) => stream.requestIndex === 0)!;
    const a2Request = openai.requests.find((request) => sentMessages(request.body).at(-1)?.content === "a2")!;
    expect(a2Request.sequence).toBeGreaterThan(a1Stream.endSequence!);
  });

  test("{{env.NAME}} reads the environment, overridden by the run's envVars", async () => {
    const fixture = track(
      await createEngineFixture({
        prompt: {
          model: "dev:echo",
          messages: [{ role: "user", content: "{{message}} {{env.GREETING}} {{env.TARGET}}" }],
        },
        environmentEnv: { GREETING: "hello", TARGET: "world" },
      }),
    );
    await fixture.engine.start();
    const plain = await fixture.createRun({ inputs: { message: "say" } });
    expect((await fixture.waitForEnd(plain.id)).output).toBe("say hello world");
    const overridden = await fixture.createRun({ inputs: { message: "say" }, envVars: { TARGET: "moon" } });
    expect((await fixture.waitForEnd(overridden.id)).output).toBe("say hello moon");
  });

  test("a {{env.NAME}} set nowhere fails the run, naming the variable, without calling a model", async () => {
    const fixture = track(
      await createEngineFixture({
        prompt: {
          model: "dev:echo",
          messages: [{ role: "user", content: "{{message}} {{env.MISSING_KEY}}" }],
        },
        environmentEnv: { OTHER: "x" },
      }),
    );
    await fixture.engine.start();
    const run = await fixture.createRun({ inputs: { message: "say" } });
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toContain("env var 'MISSING_KEY' is not set");
    expect(fixture.eventsOf(run.id).map((delivered) => delivered.event.type)).toEqual(["run.failed"]);
  });
});

describe("engine model injection", () => {
  test("a test can inject any AI SDK model through the gateway hook", async () => {
    const chunks: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "mocked " },
      { type: "text-delta", id: "t", delta: "reply" },
      { type: "text-end", id: "t" },
      {
        type: "finish",
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 4, noCache: 4, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 2, text: 2, reasoning: 0 },
        },
      },
    ];
    const model = new MockLanguageModelV4({
      doStream: async () => ({ stream: simulateReadableStream({ chunks }) }),
    });
    const fixture = track(
      await createEngineFixture({
        engine: { models: { resolve: async () => ({ model, provider: "mock", modelId: "m", secrets: [] }) } },
      }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun({ inputs: { message: "ping" } })).id);
    expect(ended.output).toBe("mocked reply");
    expect(ended.tokenUsage?.total).toBe(6);
    expect(model.doStreamCalls[0]!.prompt.map((message) => message.role)).toEqual(["system", "user"]);
  });
});

describe("engine provider credentials", () => {
  test("an unknown provider fails the run with a clear message", async () => {
    const fixture = track(await createEngineFixture({ prompt: { model: "mystery:model-1" } }));
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("unknown model provider 'mystery' (known: openai, anthropic, dev)");
    expect(fixture.eventsOf(ended.id).map((delivered) => delivered.event.type)).toEqual(["run.failed"]);
  });

  test("a stored dev:echo version fails clearly once the development model is turned off", async () => {
    const fixture = track(
      await createEngineFixture({ prompt: { model: "dev:echo" }, config: { devModel: false } }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      "model 'dev:echo': the development model is turned off on this server (PROMPTRUN_DEV_MODEL=false)",
    );
  });

  test("no key anywhere fails with the variable to set", async () => {
    const fixture = track(await createEngineFixture());
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.error).toBe("no API key for openai: set OPENAI_API_KEY");
  });

  test("a tenant base URL is never sent the server's key", async () => {
    const tenantServer = track(startFakeOpenAI({ type: "stream", tokens: ["leak?"] }));
    const serverSide = track(startFakeOpenAI({ type: "stream", tokens: ["ok"] }));
    const fixture = track(
      await createEngineFixture({
        config: openAIConfig(serverSide),
        environmentEnv: { OPENAI_BASE_URL: tenantServer.baseUrl },
      }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.error).toBe(
      "OPENAI_BASE_URL from the environment requires OPENAI_API_KEY from the environment too",
    );
    expect(tenantServer.requests).toHaveLength(0);
    expect(serverSide.requests).toHaveLength(0);
  });

  test("a tenant base URL with a tenant key is used (run envVars win over the environment)", async () => {
    const tenantServer = track(startFakeOpenAI({ type: "stream", tokens: ["tenant"] }));
    const serverSide = track(startFakeOpenAI({ type: "stream", tokens: ["server"] }));
    const fixture = track(
      await createEngineFixture({
        config: openAIConfig(serverSide),
        environmentEnv: { OPENAI_API_KEY: "sk-environment-key" },
      }),
    );
    await fixture.engine.start();
    const run = await fixture.createRun({
      envVars: { OPENAI_BASE_URL: tenantServer.baseUrl, OPENAI_API_KEY: "sk-run-key" },
    });
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.output).toBe("tenant");
    expect(tenantServer.requests[0]!.headers.authorization).toBe("Bearer sk-run-key");
    expect(serverSide.requests).toHaveLength(0);
  });

  test("a tenant base URL on a private range is refused unless private URLs are allowed", async () => {
    const tenantServer = track(startFakeOpenAI({ type: "stream", tokens: ["private"] }));
    const fixture = track(
      await createEngineFixture({
        config: { allowPrivateUrls: false },
        environmentEnv: { OPENAI_BASE_URL: tenantServer.baseUrl, OPENAI_API_KEY: "sk-tenant" },
      }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      "OPENAI_BASE_URL must resolve to a public address (private or loopback addresses and hosts that do not resolve are refused)",
    );
    expect(tenantServer.requests).toHaveLength(0);
  });
});
