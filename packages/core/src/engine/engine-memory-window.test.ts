/**
 * The memory window through the real engine (docs/PRODUCT-RULES.md "Thread memory"): what a run
 * carries, what it reports as `memory`, what the upstream request holds, and the context error.
 * The 300-turn threads on SQLite and Postgres: db/src/engine-memory-window.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { PromptFileInput } from "@promptrun/contract";
import type { FakeProviderServer } from "../testing/fake-providers/index.ts";
import { startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createEngineFixture, type EngineFixture, sentMessages } from "./engine-test-fixture.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const track = <T extends FakeProviderServer | EngineFixture>(resource: T): T => {
  cleanups.push(() => resource.close());
  return resource;
};

const devEcho = async (prompt: Partial<PromptFileInput>) => {
  const fixture = track(await createEngineFixture({ prompt: { model: "dev:echo", ...prompt } }));
  await fixture.engine.start();
  return fixture;
};

const withOpenAI = async (server: FakeProviderServer, prompt: Partial<PromptFileInput> = {}) => {
  const fixture = track(
    await createEngineFixture({
      prompt,
      config: {
        providers: { openai: { apiKey: "sk-test", baseUrl: server.baseUrl }, anthropic: {}, compatible: [] },
      },
    }),
  );
  await fixture.engine.start();
  return fixture;
};

/** Runs `turns` runs one after the other on one thread; the ended runs, in order. */
const converse = async (fixture: EngineFixture, turns: number, message: (turn: number) => string) => {
  const thread = Bun.randomUUIDv7();
  const ended = [];
  for (let turn = 1; turn <= turns; turn++) {
    const run = await fixture.createRun({ thread, inputs: { message: message(turn) } });
    ended.push(await fixture.waitForEnd(run.id));
  }
  return ended;
};

/** The window of turn `turn` (1-based) when every exchange is 2 messages and `fit` whole ones fit. */
const expectedWindow = (turn: number, fitExchanges: number) => {
  const history = 2 * (turn - 1);
  const messages = Math.min(history, 2 * fitExchanges);
  return { messages, dropped: history - messages };
};

describe("memory window", () => {
  test("memory.maxMessages: each run carries at most that many history messages and reports the rest", async () => {
    const fixture = await devEcho({ memory: { maxMessages: 5 } });
    const ended = await converse(fixture, 12, (turn) => `turn ${turn}`);
    for (const [index, run] of ended.entries()) {
      expect(run.status).toBe("completed");
      // 5 messages hold two whole exchanges (4 messages), never half of a third.
      expect(run.memoryWindow).toEqual(expectedWindow(index + 1, 2));
    }
    const completed = fixture
      .eventsOf(ended.at(-1)!.id)
      .find((event) => event.event.type === "run.completed");
    expect(completed?.event.data).toMatchObject({ memory: { messages: 4, dropped: 18 } });
  });

  test("memory.maxInputTokens: history within ceil(bytes / 4) tokens per message", async () => {
    // Each message is 40 bytes (10 tokens) and dev:echo answers with the same 40 bytes: an
    // exchange is 20 tokens, so 50 tokens hold two of them.
    const fixture = await devEcho({ memory: { maxInputTokens: 50 } });
    const ended = await converse(fixture, 8, (turn) => `turn ${turn}`.padEnd(40, "."));
    expect(ended.map((run) => run.memoryWindow)).toEqual(
      ended.map((_, index) => expectedWindow(index + 1, 2)),
    );
  });

  test("no memory in the prompt: dev:echo carries the whole history", async () => {
    const fixture = await devEcho({});
    const ended = await converse(fixture, 6, (turn) => `turn ${turn}`);
    expect(ended.map((run) => run.memoryWindow)).toEqual(
      ended.map((_, index) => ({ messages: 2 * index, dropped: 0 })),
    );
  });

  test("the upstream request carries the system message, the window, then the prompt's own message", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["ok"] }));
    const fixture = await withOpenAI(openai, { memory: { maxMessages: 6 } });
    const ended = await converse(fixture, 9, (turn) => `question ${turn}`);
    expect(ended.every((run) => run.status === "completed")).toBe(true);
    expect(openai.requests).toHaveLength(9);
    for (const [index, request] of openai.requests.entries()) {
      const window = expectedWindow(index + 1, 3);
      expect(ended[index]!.memoryWindow).toEqual(window);
      const sent = sentMessages(request.body);
      expect(sent).toHaveLength(1 + window.messages + 1);
      const firstCarried = index + 1 - window.messages / 2;
      const history = Array.from({ length: window.messages / 2 }, (_, exchange) => [
        { role: "user", content: `question ${firstCarried + exchange}` },
        { role: "assistant", content: "ok" },
      ]).flat();
      expect(sent).toEqual([
        { role: "system", content: "You are terse." },
        ...history,
        { role: "user", content: `question ${index + 1}` },
      ]);
    }
  });

  test("no memory in the prompt: an openai run's history stops at the default 128,000-token context", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["ok"] }));
    const fixture = await withOpenAI(openai);
    // 100,000-byte questions are 25,000 tokens; "ok" is 1. The last run's own messages take
    // 4 ("You are terse.") + 25,000, which leaves 102,996 tokens: 4 exchanges of 25,001.
    const ended = await converse(fixture, 6, (turn) => `${turn} `.padEnd(100_000, "x"));
    expect(ended.map((run) => run.memoryWindow)).toEqual([
      { messages: 0, dropped: 0 },
      { messages: 2, dropped: 0 },
      { messages: 4, dropped: 0 },
      { messages: 6, dropped: 0 },
      { messages: 8, dropped: 0 },
      { messages: 8, dropped: 2 },
    ]);
    expect(sentMessages(openai.requests[5]!.body)).toHaveLength(1 + 8 + 1);
  });

  test("a context-length error fails the run at once, saying how to bound the memory", async () => {
    const openai = track(
      startFakeOpenAI({
        type: "error",
        status: 400,
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 1.",
      }),
    );
    const fixture = await withOpenAI(openai);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended).toMatchObject({
      status: "failed",
      error:
        "the conversation is longer than openai:gpt-4o-mini's context window; set memory.maxMessages or memory.maxInputTokens in the prompt",
      attempts: 1,
      memoryWindow: { messages: 0, dropped: 0 },
    });
    expect(openai.requests).toHaveLength(1);
  });

  test("a message of parts is remembered with them: the next run sends the image again", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["a cat"] }));
    const image =
      "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    const fixture = await withOpenAI(openai, {
      inputs: { message: { type: "string" }, picture: { type: "image", optional: true } },
      messages: [
        { role: "system", content: "You are terse." },
        {
          role: "user",
          content: [
            { type: "text", text: "{{message}}" },
            { type: "image", image: "{{picture}}" },
          ],
        },
      ],
    });
    const thread = Bun.randomUUIDv7();
    const first = await fixture.createRun({ thread, inputs: { message: "what is this?", picture: image } });
    expect((await fixture.waitForEnd(first.id)).status).toBe("completed");
    const second = await fixture.createRun({ thread, inputs: { message: "and its colour?" } });
    expect(await fixture.waitForEnd(second.id)).toMatchObject({
      status: "completed",
      memoryWindow: { messages: 2, dropped: 0 },
    });

    const { messages } = await fixture.store.runs.memory(fixture.tenantId, thread, "default");
    expect(messages[0]).toEqual({
      role: "user",
      content: "what is this?",
      parts: [
        { type: "text", text: "what is this?" },
        { type: "image", image },
      ],
    });
    const body = openai.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(body.messages).toHaveLength(4);
    expect(JSON.stringify(body.messages[1]!.content)).toContain(image.slice("data:image/png;base64,".length));
    expect(sentMessages(body).map((message) => message.content)).toEqual([
      "You are terse.",
      "what is this?",
      "a cat",
      "and its colour?",
    ]);
  });
});
