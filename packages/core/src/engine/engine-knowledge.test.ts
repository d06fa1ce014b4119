import { afterEach, describe, expect, test } from "bun:test";
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import type { ParsedSearchRequest, PromptFileInput } from "@promptrun/contract";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { notFound } from "../errors.ts";
import type { DocumentCost, KnowledgeSearch } from "../knowledge/ports.ts";
import type { RunRecord } from "../ports.ts";
import { createEngineFixture, type EngineFixture, type FixtureOptions } from "./engine-test-fixture.ts";
import { withLastStep, withResults } from "./run-steps.ts";

const fixtures: EngineFixture[] = [];
afterEach(async () => {
  for (const fixture of fixtures.splice(0)) await fixture.close();
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

const callTool = (id: string, name: string, input: unknown): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "tool-call", toolCallId: id, toolName: name, input: JSON.stringify(input) },
  { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: usage(10, 5) },
];

/** Every text the model was sent (message texts and tool outputs), joined. */
const sentText = (prompt: LanguageModelV4Prompt): string => JSON.stringify(prompt);

function scriptedModel(
  reply: (options: LanguageModelV4CallOptions, call: number) => LanguageModelV4StreamPart[],
) {
  let calls = 0;
  return new MockLanguageModelV4({
    doStream: async (options) => ({ stream: simulateReadableStream({ chunks: reply(options, calls++) }) }),
  });
}

const LONG = `Refunds are paid back to the original card within five working days. ${"Details follow. ".repeat(20)}`;

interface FakeChunk {
  chunkId: string;
  documentId: string;
  filename: string;
  text: string;
}

const chunk = (filename: string, text: string): FakeChunk => ({
  chunkId: Bun.randomUUIDv7(),
  documentId: Bun.randomUUIDv7(),
  filename,
  text,
});

/** A knowledge search over fixed chunks: a chunk matches when it contains a word of the query. */
function fakeKnowledge(bases: Record<string, FakeChunk[]>) {
  const searches: Array<{ tenantId: string; slug: string; request: ParsedSearchRequest }> = [];
  const chunkReads: string[][] = [];
  const state: { cost: DocumentCost; fail: Error | null } = { cost: { total: 0, priced: true }, fail: null };
  const knowledge: KnowledgeSearch = {
    async search(tenantId, slug, request) {
      searches.push({ tenantId, slug, request });
      if (state.fail) throw state.fail;
      const chunks = bases[slug];
      if (!chunks) throw notFound(`no knowledge base ${slug}`);
      const words = request.query.toLowerCase().split(/\W+/).filter(Boolean);
      const hits = chunks
        .filter((candidate) => words.some((word) => candidate.text.toLowerCase().includes(word)))
        .slice(0, request.topK)
        .map((hit, index) => ({ ...hit, score: 1 / (index + 1), metadata: {} }));
      return { hits, cost: state.cost, tokens: words.length };
    },
    async chunks(_tenantId, slug, chunkIds) {
      chunkReads.push(chunkIds);
      return (bases[slug] ?? [])
        .filter((candidate) => chunkIds.includes(candidate.chunkId))
        .map((found) => ({ ...found, metadata: {} }));
    },
  };
  return { knowledge, searches, chunkReads, state };
}

const refunds = chunk("refunds.md", LONG);
const cards = chunk("cards.md", "Card refunds show up as a credit, not a new payment.");
const shipping = chunk("shipping.md", "Parcels ship within two days by courier.");
const bases = () => ({ docs: [refunds, cards, shipping] });

const ragPrompt: Partial<PromptFileInput> = {
  inputs: { question: { type: "string" } },
  retrieval: { knowledgeBase: "docs", query: "{{question}}", topK: 2 },
  messages: [
    { role: "system", content: "Answer from the sources; cite them as [n]." },
    { role: "user", content: "Sources:\n{{retrieval}}\n\nQuestion: {{question}}" },
  ],
};

async function fixtureWith(
  model: MockLanguageModelV4 | null,
  prompt: Partial<PromptFileInput>,
  knowledge: KnowledgeSearch,
  options: Omit<FixtureOptions, "prompt"> = {},
) {
  const fixture = await createEngineFixture({
    ...options,
    prompt,
    engine: {
      knowledge,
      ...(model
        ? { models: { resolve: async () => ({ model, provider: "mock", modelId: "m", secrets: [] }) } }
        : {}),
    },
  });
  fixtures.push(fixture);
  await fixture.engine.start();
  return fixture;
}

async function waitForPause(fixture: EngineFixture, runId: string): Promise<RunRecord> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const run = await fixture.store.runs.getById(runId);
    if (run?.pause) return run;
    if (run && run.status !== "pending") throw new Error(`run ended ${run.status}: ${run.error}`);
    await Bun.sleep(5);
  }
  throw new Error(`run ${runId} did not pause`);
}

const question = (text: string) => ({ inputs: { question: text } });

describe("retrieval: in prompts", () => {
  test("searches once before the first token; {{retrieval}} reaches the model; [n] markers become citations", async () => {
    const fake = fakeKnowledge(bases());
    const model = scriptedModel(() => answer("Five working days [1, 2]. Also [3] and again [1]."));
    const fixture = await fixtureWith(model, ragPrompt, fake.knowledge);
    const run = await fixture.createRun(question("how do refunds work?"));
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("completed");

    expect(fake.searches).toEqual([
      {
        tenantId: fixture.tenantId,
        slug: "docs",
        request: { query: "how do refunds work?", topK: 2, mode: "hybrid" },
      },
    ]);
    const sent = model.doStreamCalls[0]!.prompt;
    const user = sent.find((message) => message.role === "user")!;
    expect(JSON.stringify(user.content)).toContain(
      JSON.stringify(
        `Sources:\n[1] refunds.md: ${LONG}\n\n[2] cards.md: ${cards.text}\n\nQuestion: how do refunds work?`,
      ).slice(1, -1),
    );

    const chunks = [
      { n: 1, chunkId: refunds.chunkId, documentId: refunds.documentId, filename: "refunds.md", score: 1 },
      { n: 2, chunkId: cards.chunkId, documentId: cards.documentId, filename: "cards.md", score: 0.5 },
    ];
    expect(ended.retrieval).toEqual([{ knowledgeBase: "docs", query: "how do refunds work?", chunks }]);
    // [3] names no retrieved chunk (2 were retrieved): no citation; [1] twice: one.
    expect(ended.citations).toEqual([
      {
        n: 1,
        chunkId: refunds.chunkId,
        documentId: refunds.documentId,
        filename: "refunds.md",
        quote: LONG.slice(0, 200),
      },
      { n: 2, chunkId: cards.chunkId, documentId: cards.documentId, filename: "cards.md", quote: cards.text },
    ]);

    const events = fixture.eventsOf(run.id).map((delivered) => delivered.event);
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === "run.retrieval")).toHaveLength(1);
    expect(types.indexOf("run.retrieval")).toBeGreaterThan(types.indexOf("run.started"));
    expect(types.indexOf("run.retrieval")).toBeLessThan(types.indexOf("run.token"));
    expect(events.find((event) => event.type === "run.retrieval")!.data).toEqual({
      runId: run.id,
      knowledgeBase: "docs",
      query: "how do refunds work?",
      chunks,
    });
  });

  test("[n][m] markers cite both; a run whose output cites nothing has no citations", async () => {
    const fake = fakeKnowledge(bases());
    const replies = ["Refunds [2][1].", "I do not know."];
    const model = scriptedModel((_options, call) => answer(replies[call]!));
    const fixture = await fixtureWith(model, ragPrompt, fake.knowledge, { config: { concurrency: 1 } });
    const first = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(first.citations.map((citation) => citation.n)).toEqual([2, 1]);
    const second = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(second.status).toBe("completed");
    expect(second.citations).toEqual([]);
    expect(second.retrieval).toHaveLength(1);
  });

  test("an unknown knowledge base fails the run clearly, before any model call", async () => {
    const fake = fakeKnowledge({});
    const model = scriptedModel(() => answer("never"));
    const fixture = await fixtureWith(model, ragPrompt, fake.knowledge);
    const ended = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("knowledge base 'docs' not found");
    expect(fake.searches).toHaveLength(1);
    expect(model.doStreamCalls).toHaveLength(0);
  });

  test("a failed search (the embedding provider down) fails the run with its message", async () => {
    const fake = fakeKnowledge(bases());
    fake.state.fail = new Error("embedding provider openai: HTTP 503 after 3 attempts");
    const model = scriptedModel(() => answer("never"));
    const fixture = await fixtureWith(model, ragPrompt, fake.knowledge);
    const ended = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      "search of knowledge base 'docs' failed: embedding provider openai: HTTP 503 after 3 attempts",
    );
    expect(model.doStreamCalls).toHaveLength(0);
  });

  test("a run whose model call fails after the search keeps the search and its cost", async () => {
    const fake = fakeKnowledge(bases());
    fake.state.cost = { total: 0.0125, priced: true };
    const model = new MockLanguageModelV4({
      doStream: async () => {
        throw Object.assign(new Error("invalid api key"), { statusCode: 401 });
      },
    });
    const fixture = await fixtureWith(model, ragPrompt, fake.knowledge);
    const ended = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(ended.status).toBe("failed");
    expect(ended.retrieval.map((entry) => entry.chunks.length)).toEqual([2]);
    expect(ended.citations).toEqual([]);
    expect(ended.cost!.success.input).toBeCloseTo(0.0125, 12);
    expect(ended.cost!.total).toBeGreaterThanOrEqual(0.0125);
  });

  test("the query's embedding cost is part of the run's cost (success.input and totals); unpriced stays unpriced", async () => {
    const fake = fakeKnowledge(bases());
    const model = scriptedModel(() => answer("Five days [1]."));
    const fixture = await fixtureWith(model, ragPrompt, fake.knowledge, { config: { concurrency: 1 } });
    const free = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    fake.state.cost = { total: 0.0125, priced: true };
    const paid = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(paid.tokenUsage).toEqual(free.tokenUsage);
    expect(free.cost!.success.priced).toBe(true);
    expect(paid.cost!.success.input).toBeCloseTo(free.cost!.success.input + 0.0125, 12);
    expect(paid.cost!.success.total).toBeCloseTo(free.cost!.success.total + 0.0125, 12);
    expect(paid.cost!.total).toBeCloseTo(free.cost!.total + 0.0125, 12);
    expect(paid.steps[0]!.cost.success.input).toBeCloseTo(free.steps[0]!.cost.success.input + 0.0125, 12);

    fake.state.cost = { total: 0, priced: false };
    const unpriced = await fixture.waitForEnd((await fixture.createRun(question("refunds"))).id);
    expect(unpriced.cost!.success.priced).toBe(false);
  });
});

describe("the knowledge_base tool", () => {
  test("the model searches; numbering continues after the prompt's retrieval; each search is recorded and announced", async () => {
    const fake = fakeKnowledge(bases());
    fake.state.cost = { total: 0.001, priced: true };
    const model = scriptedModel((options, call) => {
      if (call === 0) return callTool("c1", "search_docs", { query: "parcels courier" });
      const tool = sentText(options.prompt);
      return answer(tool.includes("[3] shipping.md: Parcels ship") ? "Two days [3], refunds [1]." : "no [3]");
    });
    const prompt = {
      ...ragPrompt,
      tools: [{ type: "knowledge_base" as const, knowledgeBase: "docs", topK: 4 }],
    };
    const fixture = await fixtureWith(model, prompt, fake.knowledge);
    const run = await fixture.createRun(question("refunds"));
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("Two days [3], refunds [1].");

    const offered = model.doStreamCalls[0]!.tools!;
    expect(offered.map((tool) => tool.name)).toEqual(["search_docs"]);
    expect(fake.searches.map((search) => [search.request.query, search.request.topK])).toEqual([
      ["refunds", 2],
      ["parcels courier", 4],
    ]);
    const result = ended.steps[0]!.toolResults[0]!;
    expect(result).toMatchObject({ name: "search_docs", isError: false, executedBy: "server" });
    expect(result.output).toBe(`[3] shipping.md: ${shipping.text}`);
    expect(ended.retrieval.map((entry) => [entry.query, entry.chunks.map((c) => c.n)])).toEqual([
      ["refunds", [1, 2]],
      ["parcels courier", [3]],
    ]);
    expect(ended.citations.map((citation) => [citation.n, citation.filename])).toEqual([
      [3, "shipping.md"],
      [1, "refunds.md"],
    ]);
    // Both searches are charged to step 0: the prompt's retrieval it followed, the search it made.
    expect(ended.steps[0]!.cost.success.input).toBeGreaterThanOrEqual(0.002);
    expect(ended.steps[1]!.cost.success.input).toBeLessThan(0.001);
    const stepsSum = ended.steps.reduce((sum, step) => sum + step.cost.success.input, 0);
    expect(ended.cost!.success.input).toBeCloseTo(stepsSum, 12);

    const types = fixture.eventsOf(run.id).map((delivered) => delivered.event.type);
    expect(types.filter((type) => type === "run.retrieval")).toHaveLength(2);
    expect(types.lastIndexOf("run.retrieval")).toBeLessThan(types.indexOf("run.tool_result"));
  });

  test("two searches in one step run in parallel and never share a number", async () => {
    const fake = fakeKnowledge(bases());
    const model = scriptedModel((options, call) =>
      call === 0
        ? [
            { type: "stream-start", warnings: [] },
            { type: "tool-call", toolCallId: "a", toolName: "search_docs", input: '{"query": "courier"}' },
            { type: "tool-call", toolCallId: "b", toolName: "search_docs", input: '{"query": "refunds"}' },
            {
              type: "finish",
              finishReason: { unified: "tool-calls", raw: "tool_calls" },
              usage: usage(10, 5),
            },
          ]
        : answer(`seen ${sentText(options.prompt).length > 0}`),
    );
    const prompt = {
      messages: [{ role: "user" as const, content: "{{message}}" }],
      tools: [{ type: "knowledge_base" as const, knowledgeBase: "docs" }],
    };
    const fixture = await fixtureWith(model, prompt, fake.knowledge);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    const numbers = ended.retrieval.flatMap((entry) => entry.chunks.map((c) => c.n));
    expect(numbers.sort()).toEqual([1, 2, 3]);
    const outputs = ended.steps[0]!.toolResults.map((result) => String(result.output));
    expect(
      outputs
        .join("\n\n")
        .match(/^\[\d+\]/gm)!
        .sort(),
    ).toEqual(["[1]", "[2]", "[3]"]);
  });

  test("an empty query or an unknown knowledge base is an error result the model sees", async () => {
    const fake = fakeKnowledge(bases());
    const model = scriptedModel((options, call) => {
      if (call === 0) return callTool("c1", "search_docs", { query: "  " });
      if (call === 1) return callTool("c2", "manuals", { query: "anything" });
      return answer(sentText(options.prompt).includes("not found") ? "understood" : "confused");
    });
    const prompt = {
      messages: [{ role: "user" as const, content: "{{message}}" }],
      tools: [
        { type: "knowledge_base" as const, knowledgeBase: "docs" },
        { type: "knowledge_base" as const, knowledgeBase: "missing", name: "manuals" },
      ],
    };
    const fixture = await fixtureWith(model, prompt, fake.knowledge);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("understood");
    expect(ended.steps[0]!.toolResults[0]).toMatchObject({
      isError: true,
      output: "query must be a non-empty string",
    });
    expect(ended.steps[1]!.toolResults[0]).toMatchObject({
      isError: true,
      output: "knowledge base 'missing' not found",
    });
    expect(ended.retrieval).toEqual([]);
    expect(ended.citations).toEqual([]);
  });
});

describe("retrieval across a pause and a restart", () => {
  test("a run continuing after its tool outputs does not search again; chunk texts are re-read", async () => {
    const fake = fakeKnowledge(bases());
    const model = scriptedModel((options, call) => {
      if (call === 0) return callTool("c1", "lookup_order", { number: "A-1" });
      const again = sentText(options.prompt).includes(JSON.stringify(`[1] refunds.md: ${LONG}`).slice(1, -1));
      return answer(again ? "Refunded [1]." : "lost the sources");
    });
    const prompt = {
      ...ragPrompt,
      tools: [
        {
          type: "function" as const,
          name: "lookup_order",
          parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
        },
      ],
    };
    const fixture = await fixtureWith(model, prompt, fake.knowledge);
    const run = await fixture.createRun(question("refunds"));
    const paused = await waitForPause(fixture, run.id);
    expect(paused.retrieval.map((entry) => entry.chunks.length)).toEqual([2]);

    const step = paused.steps.at(-1)!;
    const results = [
      {
        toolCallId: "c1",
        name: "lookup_order",
        output: "shipped",
        isError: false,
        executedBy: "client" as const,
      },
    ];
    const steps = withLastStep(paused.steps, withResults(step, results));
    expect(await fixture.store.runs.resume(run.id, { step: paused.pause!.step, steps })).toBe(true);
    fixture.engine.resume((await fixture.store.runs.getById(run.id))!);
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.output).toBe("Refunded [1].");
    expect(fake.searches).toHaveLength(1);
    expect(fake.chunkReads).toEqual([[refunds.chunkId, cards.chunkId]]);
    expect(ended.citations[0]!.quote).toBe(LONG.slice(0, 200));
    const types = fixture.eventsOf(run.id).map((delivered) => delivered.event.type);
    expect(types.filter((type) => type === "run.retrieval")).toHaveLength(1);
  });

  test("a restart after the search reuses the stored retrieval", async () => {
    const fake = fakeKnowledge(bases());
    // The first instance's model never answers: it is stopped mid-call, after the search.
    const hanging = new MockLanguageModelV4({
      doStream: async (options) => {
        await new Promise((resolve) => options.abortSignal?.addEventListener("abort", resolve));
        throw new Error("aborted");
      },
    });
    const first = await fixtureWith(hanging, ragPrompt, fake.knowledge);
    const run = await first.createRun(question("refunds"));
    const deadline = Date.now() + 5_000;
    while (hanging.doStreamCalls.length === 0 && Date.now() < deadline) await Bun.sleep(5);
    await first.engine.stop({ graceMs: 0 });
    const stored = (await first.store.runs.getById(run.id))!;
    expect(stored.status).toBe("pending");
    expect(stored.retrieval.map((entry) => entry.chunks.map((c) => c.n))).toEqual([[1, 2]]);

    const model = scriptedModel((options) =>
      answer(sentText(options.prompt).includes("[2] cards.md: Card refunds") ? "Credit [2]." : "no sources"),
    );
    const second = await createEngineFixture({
      store: first.store,
      prompt: ragPrompt,
      engine: {
        knowledge: fake.knowledge,
        models: { resolve: async () => ({ model, provider: "mock", modelId: "m", secrets: [] }) },
      },
    });
    fixtures.push(second);
    second.watchThread(run.threadId);
    await second.engine.start();
    const ended = await second.waitForEnd(run.id);
    expect(ended.output).toBe("Credit [2].");
    expect(fake.searches).toHaveLength(1);
    expect(ended.retrieval).toEqual(stored.retrieval);
    // Taken again from its start: run.started, the stored retrieval again, then the tokens.
    const types = second.eventsOf(run.id).map((delivered) => delivered.event.type);
    expect(types.slice(0, 3)).toEqual(["run.started", "run.retrieval", "run.step"]);
    expect(types.filter((type) => type === "run.retrieval")).toHaveLength(1);
    expect(ended.citations).toEqual([
      { n: 2, chunkId: cards.chunkId, documentId: cards.documentId, filename: "cards.md", quote: cards.text },
    ]);
  });
});

describe("dev:echo with {{retrieval}}", () => {
  test("a keyless run echoes the numbered chunks and so cites them", async () => {
    const fake = fakeKnowledge(bases());
    const fixture = await fixtureWith(null, { ...ragPrompt, model: "dev:echo" }, fake.knowledge);
    const ended = await fixture.waitForEnd((await fixture.createRun(question("refunds card"))).id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toContain("[1] refunds.md: Refunds are paid back");
    expect(ended.citations.map((citation) => [citation.n, citation.filename])).toEqual([
      [1, "refunds.md"],
      [2, "cards.md"],
    ]);
  });

  test("dev:echo calls the knowledge_base tool with /call and echoes its numbered output", async () => {
    const fake = fakeKnowledge(bases());
    const prompt = {
      model: "dev:echo",
      messages: [{ role: "user" as const, content: "{{message}}" }],
      tools: [{ type: "knowledge_base" as const, knowledgeBase: "docs" }],
    };
    const fixture = await fixtureWith(null, prompt, fake.knowledge);
    const run = await fixture.createRun({ inputs: { message: '/call search_docs {"query": "courier"}' } });
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe(`[1] shipping.md: ${shipping.text}`);
    expect(ended.citations.map((citation) => [citation.n, citation.chunkId])).toEqual([
      [1, shipping.chunkId],
    ]);
  });
});
