/**
 * Real providers end to end: the server's AI SDK providers talk to wire-level fakes of OpenAI's
 * chat-completions and Anthropic's messages streaming formats (real HTTP on 127.0.0.1), and runs
 * end with the right output, usage, cost, retries, cancellation and thread memory.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import {
  type FakeReply,
  type FakeRequest,
  startFakeAnthropic,
  startFakeOpenAI,
} from "@promptrun/core/testing";
import { e2eDialect } from "./support/data-set.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

type Script = (request: FakeRequest) => FakeReply;
let openaiScript: Script = () => ({ type: "stream", tokens: ["ok"] });
let anthropicScript: Script = () => ({ type: "stream", tokens: ["ok"] });
const openai = startFakeOpenAI((request) => openaiScript(request));
const anthropic = startFakeAnthropic((request) => anthropicScript(request));
let server: TestServer;

const PRICES = {
  "openai:gpt-test": { inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 2 },
  "anthropic:claude-test": { inputPerMillion: 3, cachedInputPerMillion: 0.3, outputPerMillion: 15 },
};

beforeAll(async () => {
  server = await startServer({
    env: {
      OPENAI_API_KEY: "sk-test-openai",
      OPENAI_BASE_URL: openai.baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      PROMPTRUN_PRICES: JSON.stringify(PRICES),
      PROMPTRUN_RETRY_BASE_MS: "20",
      PROMPTRUN_MAX_ATTEMPTS: "3",
    },
  });
  const dir = `${server.dataDir}/provider-prompts`;
  mkdirSync(dir, { recursive: true });
  const prompt = (slug: string, model: string) =>
    `slug: ${slug}\nmodel: ${model}\ninputs: { message: { type: string } }\nmessages:\n  - { role: system, content: "Be brief." }\n  - { role: user, content: "{{message}}" }\n`;
  await Bun.write(`${dir}/openai.yaml`, prompt("ask-openai", "openai:gpt-test"));
  await Bun.write(`${dir}/anthropic.yaml`, prompt("ask-anthropic", "anthropic:claude-test"));
  const pushed = await server.cli("prompts", "push", dir, "--tenant", server.tenantId);
  expect(pushed.code).toBe(0);
});
afterAll(async () => {
  await server?.dispose();
  await openai.close();
  await anthropic.close();
});

const start = async (slug: string, body: Record<string, unknown>) => {
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  expect(response.status).toBe(202);
  return (await response.json()) as { id: string; thread: string };
};

const round = (value: number) => Math.round(value * 1e12) / 1e12;

describe("OpenAI chat completions format", () => {
  test("output, usage with cached and reasoning tokens, and cost", async () => {
    openaiScript = () => ({
      type: "stream",
      tokens: ["Hello", ", ", "world"],
      usage: { input: 1000, cachedInput: 400, output: 300, reasoning: 120 },
    });
    const { id } = await start("ask-openai", { inputs: { message: "hi" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "Hello, world", error: null });
    expect(run.tokenUsage).toEqual({
      input: 1000,
      inputCached: 400,
      output: 300,
      reasoning: 120,
      total: 1300,
    });
    const cost = run.cost as {
      success: Record<string, number>;
      retries: Record<string, number>;
      total: number;
    };
    expect(round(cost.success.input!)).toBe(round((600 * 1) / 1e6));
    expect(round(cost.success.cachedInput!)).toBe(round((400 * 0.5) / 1e6));
    expect(round(cost.success.output!)).toBe(round((300 * 2) / 1e6));
    expect(round(cost.success.total!)).toBe(round((600 + 200 + 600) / 1e6));
    expect(cost.retries.total).toBe(0);
    expect(round(cost.total)).toBe(round(cost.success.total!));
    const sent = openai.requests.at(-1)!;
    expect(sent.headers.authorization).toBe("Bearer sk-test-openai");
  });

  test("429 with Retry-After, then success: the failed attempt is costed under retries", async () => {
    let calls = 0;
    openaiScript = () => {
      calls += 1;
      if (calls === 1)
        return {
          type: "stream",
          tokens: ["partial", " text"],
          tokenDelayMs: 20,
          cutAfterTokens: 2,
          usage: { input: 50, output: 2 },
        };
      if (calls === 2) return { type: "error", status: 429, retryAfter: "1", message: "slow down" };
      return { type: "stream", tokens: ["final"], usage: { input: 50, output: 1 } };
    };
    const before = Date.now();
    const { id } = await start("ask-openai", { inputs: { message: "retry me" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "final", attempts: 3 });
    expect(Date.now() - before).toBeGreaterThanOrEqual(950);
    const cost = run.cost as {
      retries: { total: number; output: number };
      success: { total: number };
      total: number;
    };
    expect(cost.retries.total, JSON.stringify(run)).toBeGreaterThan(0);
    expect(round(cost.total)).toBe(round(cost.success.total + cost.retries.total));
  });

  test("500s until the attempts run out: failed with the provider's message, no tokenUsage", async () => {
    openaiScript = () => ({ type: "error", status: 500, message: "upstream exploded" });
    const { id } = await start("ask-openai", { inputs: { message: "doomed" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "failed", output: null, tokenUsage: null, attempts: 3 });
    expect(String(run.error)).toContain("500");
    expect(run.cost).not.toBeNull();
  });

  test("401 fails at once without retrying and without leaking the key", async () => {
    const requestsBefore = openai.requests.length;
    openaiScript = () => ({
      type: "error",
      status: 401,
      message: "Incorrect API key provided: sk-test-openai",
    });
    const { id } = await start("ask-openai", { inputs: { message: "bad key" } });
    const run = await waitForRun(server, id);
    expect(run.status).toBe("failed");
    expect(run.attempts).toBe(1);
    expect(openai.requests.length - requestsBefore).toBe(1);
    expect(String(run.error)).not.toContain("sk-test-openai");
  });

  test("cancel mid-stream stops the upstream promptly and keeps the partial cost", async () => {
    openaiScript = () => ({
      type: "stream",
      tokens: Array.from({ length: 500 }, (_, i) => `t${i} `),
      tokenDelayMs: 20,
    });
    // Counted before the create: the run may reach the provider before its 202 is read.
    const requestIndex = openai.requests.length;
    const { id } = await start("ask-openai", { inputs: { message: "long" } });
    await openai.waitForRequests(requestIndex + 1);
    await Bun.sleep(300);
    const cancelledAt = Date.now();
    const response = await api(server, `/api/v1/promptruns/${id}/cancel`, { method: "POST" });
    expect(response.status).toBe(200);
    const stream = await openai.waitForStreamEnd(requestIndex);
    expect(stream.endedAt! - cancelledAt).toBeLessThan(1000);
    expect(stream.outcome).toBe("client-closed");
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "failed", error: "cancelled", output: null, tokenUsage: null });
    expect((run.cost as { total: number }).total).toBeGreaterThan(0);
    const again = await api(server, `/api/v1/promptruns/${id}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
  });
});

describe("Anthropic messages format", () => {
  test("output, usage with cache reads, and cost", async () => {
    anthropicScript = () => ({
      type: "stream",
      tokens: ["Bonjour", " !"],
      usage: { input: 2000, cachedInput: 1500, output: 40 },
    });
    const { id } = await start("ask-anthropic", { inputs: { message: "salut" } });
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", output: "Bonjour !" });
    expect(run.tokenUsage).toMatchObject({ input: 2000, inputCached: 1500, output: 40, total: 2040 });
    const cost = run.cost as { success: Record<string, number> };
    expect(round(cost.success.cachedInput!)).toBe(round((1500 * 0.3) / 1e6));
    expect(round(cost.success.output!)).toBe(round((40 * 15) / 1e6));
    expect(anthropic.requests.at(-1)!.headers["x-api-key"]).toBe("sk-ant-test");
  });
});

describe("threads and channels", () => {
  test("three runs created at once on one channel run one at a time in creation order, each seeing the ones before; another channel neither waits nor sees them", async () => {
    const thread = crypto.randomUUID();
    const MAIN = ["one", "two", "three"];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lastUserMessage = (body: unknown) =>
      String((body as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content);
    let mainArrivals = 0;
    openaiScript = (request) => {
      const message = lastUserMessage(request.body);
      const isMain = MAIN.includes(message);
      if (isMain) mainArrivals += 1;
      // The first run of the channel to reach the provider holds its stream open until released.
      const hold = isMain && mainArrivals === 1 ? { holdBeforeFinish: held } : {};
      return { type: "stream", tokens: [`answer to ${message}`], ...hold };
    };
    const first = openai.requests.length;
    const created = await Promise.all(
      MAIN.map((message) => start("ask-openai", { inputs: { message }, thread })),
    );
    const side = await start("ask-openai", { inputs: { message: "elsewhere" }, thread, channel: "side" });

    // Another channel is not queued behind the held run.
    expect(await waitForRun(server, side.id)).toMatchObject({
      status: "completed",
      output: "answer to elsewhere",
    });
    // While the first is held, the other two of its channel have not reached the provider.
    const deadline = Date.now() + 10_000;
    while (mainArrivals === 0 && Date.now() < deadline) await Bun.sleep(20);
    await Bun.sleep(300);
    expect(mainArrivals).toBe(1);
    release();
    const runs = await Promise.all(created.map(({ id }) => waitForRun(server, id)));

    // Creation order as the server recorded it (createdAt, then the time-ordered id).
    const byCreation = [...runs].sort((a, b) =>
      String(a.createdAt) === String(b.createdAt)
        ? String(a.id).localeCompare(String(b.id))
        : String(a.createdAt).localeCompare(String(b.createdAt)),
    );
    // The order they executed in. On SQLite the one group commit lands inserts in creation
    // order, so the two agree. On Postgres, creates that arrive together may commit in separate,
    // overlapping transactions, and a channel then runs in commit order, which can differ from
    // createdAt by the few milliseconds the requests overlapped (docs/ARCHITECTURE.md, "Known
    // gaps"): strictly one at a time and each seeing the ones before still holds, checked below.
    const ordered = [...runs].sort((a, b) => String(a.startedAt).localeCompare(String(b.startedAt)));
    if (e2eDialect === "sqlite")
      expect(ordered.map((run) => run.id)).toEqual(byCreation.map((run) => run.id));
    const messageById = new Map(created.map(({ id }, index) => [id, MAIN[index]!]));
    const messageOf = (run: Record<string, unknown>) => messageById.get(String(run.id))!;
    const messagesOf = (index: number) =>
      (
        (openai.requests[index]!.body as { messages: Array<{ role: string; content: unknown }> }).messages ??
        []
      ).map(
        (message) =>
          `${message.role}:${typeof message.content === "string" ? message.content : JSON.stringify(message.content)}`,
      );
    const mainRequests = openai.requests
      .slice(first)
      .map((request) => request.index)
      .filter((index) => MAIN.includes(lastUserMessage(openai.requests[index]!.body)));
    expect(mainRequests).toHaveLength(3);
    ordered.forEach((run, position) => {
      expect(run).toMatchObject({ status: "completed", output: `answer to ${messageOf(run)}` });
      const earlier = ordered
        .slice(0, position)
        .flatMap((before) => [`user:${messageOf(before)}`, `assistant:answer to ${messageOf(before)}`]);
      expect(messagesOf(mainRequests[position]!)).toEqual([
        "system:Be brief.",
        ...earlier,
        `user:${messageOf(run)}`,
      ]);
      // Strictly one after another: each starts after the one before it finished.
      if (position > 0)
        expect(Date.parse(String(run.startedAt))).toBeGreaterThanOrEqual(
          Date.parse(String(ordered[position - 1]!.finishedAt)),
        );
    });
    const sideRequest = openai.requests
      .slice(first)
      .find((request) => lastUserMessage(request.body) === "elsewhere");
    expect(messagesOf(sideRequest!.index)).toEqual(["system:Be brief.", "user:elsewhere"]);
  });
});
