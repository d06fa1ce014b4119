/**
 * Prompts that return data and read files, end to end: prompt files pushed with the CLI, runs
 * created over REST, the server's AI SDK providers talking to wire-level fakes. Pins the request
 * fields of docs/providers.md and the run's outputJson / finishReason as REST returns them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import {
  type FakeReply,
  type FakeRequest,
  startFakeAnthropic,
  startFakeOpenAI,
} from "@promptrun/core/testing";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

type Script = (request: FakeRequest) => FakeReply;
let openaiScript: Script = () => ({ type: "stream", tokens: ["ok"] });
let anthropicScript: Script = () => ({ type: "stream", tokens: ["ok"] });
const openai = startFakeOpenAI((request) => openaiScript(request));
const anthropic = startFakeAnthropic((request) => anthropicScript(request));
let server: TestServer;

const ANSWER_SCHEMA =
  "{ type: object, properties: { reply: { type: string }, escalate: { type: boolean } }, required: [reply, escalate], additionalProperties: false }";

// Image and file parts are pinned by core's engine-prompt-fields.test.ts: through the server they
// also need the thread memory to store a parts message (the memory-window work).
const promptFile = (slug: string, model: string, extra: string) => `slug: ${slug}
model: ${model}
inputs:
  question: { type: string }
messages:
  - { role: system, content: "You help." }
  - { role: user, content: "{{question}}" }
${extra}`;

beforeAll(async () => {
  server = await startServer({
    env: {
      OPENAI_API_KEY: "sk-test-openai",
      OPENAI_BASE_URL: openai.baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      PROMPTRUN_RETRY_BASE_MS: "20",
      PROMPTRUN_MAX_ATTEMPTS: "3",
    },
  });
  const dir = `${server.dataDir}/structured-prompts`;
  mkdirSync(dir, { recursive: true });
  const output = `output: { format: json_schema, name: answer, strict: true, schema: ${ANSWER_SCHEMA} }\n`;
  await Bun.write(
    `${dir}/openai.yaml`,
    promptFile(
      "support-openai",
      "openai:gpt-5",
      `params: { reasoning: { effort: low } }\n${output}providerOptions: { openai: { promptCacheKey: support } }\n`,
    ),
  );
  await Bun.write(
    `${dir}/anthropic.yaml`,
    promptFile(
      "support-anthropic",
      "anthropic:claude-sonnet-4-5",
      `params: { reasoning: { budgetTokens: 3000 }, maxOutputTokens: 500 }\n${output}`,
    ),
  );
  await Bun.write(`${dir}/echo.yaml`, promptFile("support-echo", "dev:echo", output));
  await Bun.write(
    `${dir}/no-reasoning.yaml`,
    promptFile("no-reasoning", "openai:gpt-4o-mini", "params: { reasoning: { effort: high } }\n"),
  );
  const pushed = await server.cli("prompts", "push", dir, "--tenant", server.tenantId);
  expect(pushed.code, pushed.stderr).toBe(0);
});
afterAll(async () => {
  await server?.dispose();
  await openai.close();
  await anthropic.close();
});

const runOf = async (slug: string, inputs: Record<string, unknown>) => {
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, {
    method: "POST",
    json: { inputs },
  });
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };
  try {
    return await waitForRun(server, id, 8_000);
  } catch (error) {
    console.error(server.logs().slice(-4000));
    throw error;
  }
};

describe("structured output through the server", () => {
  test("OpenAI: response_format, reasoning_effort, prompt_cache_key; outputJson on the run", async () => {
    openaiScript = () => ({ type: "stream", tokens: ['{"reply":"hello",', '"escalate":false}'] });
    const run = await runOf("support-openai", { question: "Look" });
    expect(run).toMatchObject({
      status: "completed",
      output: '{"reply":"hello","escalate":false}',
      outputJson: { reply: "hello", escalate: false },
      finishReason: "stop",
    });
    const body = openai.requests.at(-1)!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      reasoning_effort: "low",
      prompt_cache_key: "support",
      response_format: { type: "json_schema", json_schema: { name: "answer", strict: true } },
    });
    expect((body.messages as Array<{ content: unknown }>).at(-1)!.content).toBe("Look");
  });

  test("OpenAI: a strict answer that does not match fails with the first violation, once", async () => {
    const before = openai.requests.length;
    openaiScript = () => ({ type: "stream", tokens: ['{"reply":"x"}'], finishReason: "length" });
    const run = await runOf("support-openai", { question: "Look" });
    expect(run).toMatchObject({
      status: "failed",
      output: null,
      outputJson: null,
      finishReason: "length",
      error: "output does not match the schema: /: must have required property 'escalate'",
    });
    expect(openai.requests.length - before).toBe(1);
  });

  test("Anthropic: thinking budget and native JSON output", async () => {
    anthropicScript = () => ({ type: "stream", tokens: ['{"reply":"bonjour","escalate":true}'] });
    const run = await runOf("support-anthropic", { question: "Salut" });
    expect(run).toMatchObject({ status: "completed", outputJson: { reply: "bonjour", escalate: true } });
    expect(anthropic.requests.at(-1)!.body).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 3000 },
      max_tokens: 3500,
      output_config: { format: { type: "json_schema" } },
    });
  });

  test("dev:echo answers JSON built from the schema", async () => {
    const run = await runOf("support-echo", { question: "refund please" });
    expect(run).toMatchObject({
      status: "completed",
      outputJson: { reply: "refund please", escalate: true },
      finishReason: "stop",
    });
  });

  test("reasoning on a model that does not reason: 400 at create, no run stored, nothing sent", async () => {
    const before = openai.requests.length;
    const response = await api(server, "/api/v1/prompts/no-reasoning/latest/runs", {
      method: "POST",
      json: { inputs: { question: "hi" } },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toStartWith(
      "openai:gpt-4o-mini cannot take params.reasoning",
    );
    const stored = await server.sql<{ n: number | string }>(
      "SELECT count(*) AS n FROM runs WHERE tenant_id = ? AND prompt_slug = ?",
      [server.tenantId, "no-reasoning"],
    );
    expect(Number(stored[0]!.n)).toBe(0);
    expect(openai.requests.length).toBe(before);
  });
});
