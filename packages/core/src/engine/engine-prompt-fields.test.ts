/**
 * The prompt fields of issue #16 (output schema, reasoning, provider options, image and file
 * parts) as the real AI SDK providers send them to wire-level fakes, and what the run keeps
 * (outputJson, finishReason). docs/providers.md is the table these tests pin down.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { PromptFileInput } from "@promptrun/contract";
import type { FakeProviderServer, FakeReply } from "../testing/fake-providers/index.ts";
import { startFakeAnthropic, startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createEngineFixture, type EngineFixture } from "./engine-test-fixture.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const track = <T extends { close(): Promise<void> }>(resource: T): T => {
  cleanups.push(() => resource.close());
  return resource;
};

const answerSchema = {
  type: "object",
  properties: { reply: { type: "string" }, escalate: { type: "boolean" } },
  required: ["reply", "escalate"],
  additionalProperties: false,
};

const stream = (
  tokens: string[],
  extra: Partial<Extract<FakeReply, { type: "stream" }>> = {},
): FakeReply => ({
  type: "stream",
  tokens,
  usage: { input: 20, output: tokens.length },
  ...extra,
});

/** One tiny PNG (1×1) and one tiny PDF, as base64 data URLs. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PDF_BASE64 = Buffer.from("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n").toString("base64");
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
const PDF_DATA_URL = `data:application/pdf;base64,${PDF_BASE64}`;

const withParts: Partial<PromptFileInput> = {
  inputs: {
    question: { type: "string" },
    shot: { type: "image" },
    doc: { type: "file" },
  },
  messages: [
    { role: "system", content: "You help." },
    {
      role: "user",
      content: [
        { type: "text", text: "{{question}}" },
        { type: "image", image: "{{shot}}" },
        { type: "file", file: "{{doc}}", filename: "contract.pdf" },
      ],
    },
  ],
};

const openAIFixture = async (openai: FakeProviderServer, prompt: Partial<PromptFileInput>) => {
  const fixture = track(
    await createEngineFixture({
      prompt,
      config: {
        providers: { openai: { apiKey: "sk-test", baseUrl: openai.baseUrl }, anthropic: {}, compatible: [] },
      },
    }),
  );
  await fixture.engine.start();
  return fixture;
};

const anthropicFixture = async (anthropic: FakeProviderServer, prompt: Partial<PromptFileInput>) => {
  const fixture = track(
    await createEngineFixture({
      prompt: { model: "anthropic:claude-sonnet-4-5", ...prompt },
      config: {
        providers: {
          openai: {},
          anthropic: { apiKey: "anthropic-key", baseUrl: anthropic.baseUrl },
          compatible: [],
        },
      },
    }),
  );
  await fixture.engine.start();
  return fixture;
};

const runToEnd = async (fixture: EngineFixture, inputs: Record<string, unknown>) =>
  fixture.waitForEnd((await fixture.createRun({ inputs })).id);

describe("OpenAI chat completions", () => {
  test("output schema → response_format json_schema (strict), outputJson parsed, finishReason kept", async () => {
    const openai = track(startFakeOpenAI(stream(['{"reply":', '"on its way",', '"escalate":false}'])));
    const fixture = await openAIFixture(openai, {
      output: {
        format: "json_schema",
        name: "answer",
        description: "The reply.",
        strict: true,
        schema: answerSchema,
      },
    });
    const ended = await runToEnd(fixture, { message: "where is it?" });
    expect(ended).toMatchObject({
      status: "completed",
      output: '{"reply":"on its way","escalate":false}',
      outputJson: { reply: "on its way", escalate: false },
      finishReason: "stop",
    });
    expect(openai.requests[0]!.body).toMatchObject({
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", description: "The reply.", schema: answerSchema, strict: true },
      },
    });
    const completed = fixture.eventsOf(ended.id).at(-1)!.event;
    expect(completed.type === "run.completed" && completed.data).toMatchObject({
      outputJson: { reply: "on its way", escalate: false },
      finishReason: "stop",
    });
  });

  test("strict: an answer that does not match fails the run with the first violation, not retried", async () => {
    const openai = track(startFakeOpenAI(stream(['{"reply":3,', '"escalate":false}'])));
    const fixture = await openAIFixture(openai, {
      output: { format: "json_schema", strict: true, schema: answerSchema },
    });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended).toMatchObject({
      status: "failed",
      error: "output does not match the schema: /reply: must be string",
      output: null,
      outputJson: null,
      finishReason: "stop",
    });
    expect(openai.requests).toHaveLength(1);
    // The answer was paid for: it is costed as a failed attempt.
    expect(ended.cost?.retries.priced).toBe(true);
    expect(ended.cost?.retries.total).toBeGreaterThan(0);
  });

  test("strict: text that is not JSON fails the run too", async () => {
    const openai = track(startFakeOpenAI(stream(["Sure! ", "Here it is"])));
    const fixture = await openAIFixture(openai, {
      output: { format: "json_schema", strict: true, schema: answerSchema },
    });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended.status).toBe("failed");
    expect(ended.error).toStartWith("output does not match the schema: not valid JSON");
  });

  test("not strict: strict false upstream; JSON that does not parse completes with outputJson null", async () => {
    const openai = track(startFakeOpenAI([stream(["not json"]), stream(['{"a":', "1}"])]));
    const fixture = await openAIFixture(openai, {
      output: { format: "json_schema", schema: { type: "object" } },
    });
    const first = await runToEnd(fixture, { message: "hi" });
    expect(first).toMatchObject({ status: "completed", output: "not json", outputJson: null });
    expect(openai.requests[0]!.body).toMatchObject({
      response_format: { type: "json_schema", json_schema: { name: "response", strict: false } },
    });
    const second = await runToEnd(fixture, { message: "hi" });
    // Not strict: parsed, not checked against the schema.
    expect(second).toMatchObject({ status: "completed", outputJson: { a: 1 } });
  });

  test("a text prompt has outputJson null and the provider's finish reason (length)", async () => {
    const openai = track(startFakeOpenAI(stream(["cut sh"], { finishReason: "length" })));
    const fixture = await openAIFixture(openai, {});
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended).toMatchObject({ status: "completed", outputJson: null, finishReason: "length" });
    expect(openai.requests[0]!.body).not.toHaveProperty("response_format");
    expect(openai.requests[0]!.body).not.toHaveProperty("reasoning_effort");
  });

  test("reasoning → reasoning_effort, providerOptions pass through, image_url and file parts", async () => {
    const openai = track(startFakeOpenAI(stream(["done"])));
    const fixture = await openAIFixture(openai, {
      ...withParts,
      model: "openai:gpt-5",
      params: { reasoning: { effort: "low" } },
      providerOptions: { openai: { promptCacheKey: "support", user: "u-1" } },
    });
    const ended = await runToEnd(fixture, {
      question: "What is this?",
      shot: PNG_DATA_URL,
      doc: PDF_DATA_URL,
    });
    expect(ended.status).toBe("completed");
    const body = openai.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ reasoning_effort: "low", prompt_cache_key: "support", user: "u-1" });
    expect((body.messages as unknown[]).at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: PNG_DATA_URL } },
        { type: "file", file: { filename: "contract.pdf", file_data: PDF_DATA_URL } },
      ],
    });
  });

  test("budgetTokens alone maps to an effort; the prompt's own reasoningEffort option wins", async () => {
    const openai = track(startFakeOpenAI(stream(["ok"])));
    const budgetOnly = await openAIFixture(openai, {
      model: "openai:gpt-5",
      params: { reasoning: { budgetTokens: 5_000 } },
    });
    await runToEnd(budgetOnly, { message: "hi" });
    expect(openai.requests[0]!.body).toMatchObject({ reasoning_effort: "medium" });

    const explicit = await openAIFixture(openai, {
      slug: "explicit",
      model: "openai:gpt-5",
      params: { reasoning: { effort: "low" } },
      providerOptions: { openai: { reasoningEffort: "high" } },
    });
    await runToEnd(explicit, { message: "hi" });
    expect(openai.requests[1]!.body).toMatchObject({ reasoning_effort: "high" });
  });

  test("an image URL goes as a URL; a PDF URL (which OpenAI cannot take) is downloaded first", async () => {
    const pdf = Buffer.from(PDF_BASE64, "base64");
    const files = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) =>
        new URL(request.url).pathname === "/contract"
          ? new Response(pdf, { headers: { "content-type": "application/pdf" } })
          : new Response("gone", { status: 404 }),
    });
    cleanups.push(async () => {
      await files.stop(true);
    });
    const openai = track(startFakeOpenAI(stream(["ok"])));
    const fixture = await openAIFixture(openai, withParts);
    const shot = "https://images.example.com/shot.png";
    const ended = await runToEnd(fixture, {
      question: "q",
      shot,
      doc: `http://127.0.0.1:${files.port}/contract`,
    });
    expect(ended.status).toBe("completed");
    const content = (openai.requests[0]!.body as { messages: Array<{ content: unknown }> }).messages.at(-1)!
      .content as unknown[];
    expect(content[1]).toEqual({ type: "image_url", image_url: { url: shot } });
    expect(content[2]).toEqual({ type: "file", file: { filename: "contract.pdf", file_data: PDF_DATA_URL } });

    const missing = await runToEnd(fixture, {
      question: "q",
      shot,
      doc: `http://127.0.0.1:${files.port}/nope`,
    });
    expect(missing.status).toBe("failed");
    expect(missing.error).toBe(`could not download the file at 127.0.0.1:${files.port}: it answered 404`);
    expect(openai.requests).toHaveLength(1);
  });

  test("a field the model cannot take fails the run clearly, before any request", async () => {
    const openai = track(startFakeOpenAI(stream(["never"])));
    const fixture = await openAIFixture(openai, { params: { reasoning: { effort: "high" } } });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended.status).toBe("failed");
    expect(ended.error).toStartWith("openai:gpt-4o-mini cannot take params.reasoning: ");
    expect(ended.attempts).toBe(1);
    expect(openai.requests).toHaveLength(0);
  });

  test("a provider option the SDK warns it drops fails the run, naming it (never silently dropped)", async () => {
    const openai = track(startFakeOpenAI(stream(["dropped?"])));
    const fixture = await openAIFixture(openai, { providerOptions: { openai: { serviceTier: "flex" } } });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      "openai:gpt-4o-mini cannot take providerOptions.openai.serviceTier: flex processing is only available for o3, o4-mini, and gpt-5 models",
    );
    expect(ended.attempts).toBe(1);
    // Found by building the request with the SDK's own builder: nothing was sent (nor paid).
    expect(openai.requests).toHaveLength(0);
  });

  test("a provider option the OpenAI provider does not know fails the run instead of vanishing", async () => {
    const openai = track(startFakeOpenAI(stream(["never"])));
    const fixture = await openAIFixture(openai, { providerOptions: { openai: { promptCacheKy: "typo" } } });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended.status).toBe("failed");
    expect(ended.error).toStartWith(
      "openai:gpt-4o-mini cannot take providerOptions.openai.promptCacheKy: not an option of the AI SDK's OpenAI chat provider (known: ",
    );
    expect(ended.error).toContain("promptCacheKey");
    expect(openai.requests).toHaveLength(0);
  });
});

describe("Anthropic messages", () => {
  test("reasoning → thinking budget, image and document blocks, native JSON output", async () => {
    const anthropic = track(startFakeAnthropic(stream(['{"reply":"ok",', '"escalate":true}'])));
    const fixture = await anthropicFixture(anthropic, {
      ...withParts,
      params: { reasoning: { effort: "low" }, maxOutputTokens: 1_000 },
      output: { format: "json_schema", strict: true, schema: answerSchema },
    });
    const ended = await runToEnd(fixture, { question: "Check this", shot: PNG_DATA_URL, doc: PDF_DATA_URL });
    expect(ended).toMatchObject({
      status: "completed",
      outputJson: { reply: "ok", escalate: true },
      finishReason: "stop",
    });
    const body = anthropic.requests[0]!.body as Record<string, unknown>;
    // The SDK adds the budget to max_tokens so the answer keeps its own.
    expect(body).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 2_048 },
      max_tokens: 3_048,
      output_config: { format: { type: "json_schema", schema: answerSchema } },
    });
    expect((body.messages as unknown[]).at(-1)).toMatchObject({
      role: "user",
      content: [
        { type: "text", text: "Check this" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF_BASE64 } },
      ],
    });
  });

  test("budgetTokens is sent as is; max_tokens stop maps to finishReason length", async () => {
    const anthropic = track(startFakeAnthropic(stream(["long"], { finishReason: "max_tokens" })));
    const fixture = await anthropicFixture(anthropic, { params: { reasoning: { budgetTokens: 4_000 } } });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended).toMatchObject({ status: "completed", finishReason: "length", outputJson: null });
    expect(anthropic.requests[0]!.body).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 4_000 },
    });
  });

  test("an Anthropic option the SDK would drop fails the run before any request", async () => {
    const anthropic = track(startFakeAnthropic(stream(["never"])));
    const fixture = await anthropicFixture(anthropic, {
      providerOptions: { anthropic: { serviceTier: "priority" } },
    });
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended.status).toBe("failed");
    expect(ended.error).toStartWith(
      'anthropic:claude-sonnet-4-5 cannot take providerOptions.anthropic.serviceTier: serviceTier "priority" is not supported',
    );
    expect(anthropic.requests).toHaveLength(0);
  });
});

describe("OpenAI-compatible endpoints", () => {
  test("as OpenAI: response_format json_schema, reasoning_effort; options under the endpoint's name", async () => {
    const local = track(startFakeOpenAI(stream(['{"reply":"x","escalate":false}'])));
    const fixture = track(
      await createEngineFixture({
        prompt: {
          model: "local:qwen3",
          params: { reasoning: { effort: "high" } },
          output: { format: "json_schema", name: "answer", strict: true, schema: answerSchema },
          providerOptions: { local: { num_ctx: 8192 } },
        },
        config: {
          providers: { openai: {}, anthropic: {}, compatible: [{ name: "local", baseUrl: local.baseUrl }] },
        },
      }),
    );
    await fixture.engine.start();
    const ended = await runToEnd(fixture, { message: "hi" });
    expect(ended).toMatchObject({ status: "completed", outputJson: { reply: "x", escalate: false } });
    expect(local.requests[0]!.body).toMatchObject({
      reasoning_effort: "high",
      num_ctx: 8192,
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", schema: answerSchema, strict: true },
      },
    });
  });
});

describe("dev:echo", () => {
  test("a schema prompt completes with JSON built from the schema", async () => {
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "dev:echo", output: { format: "json_schema", strict: true, schema: answerSchema } },
      }),
    );
    await fixture.engine.start();
    const ended = await runToEnd(fixture, { message: "refund please" });
    expect(ended).toMatchObject({
      status: "completed",
      outputJson: { reply: "refund please", escalate: true },
      finishReason: "stop",
    });
    expect(JSON.parse(ended.output!)).toEqual(ended.outputJson);
  });
});
