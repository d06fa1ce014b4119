import { afterEach, describe, expect, test } from "bun:test";
import type { FakeProviderServer } from "../testing/fake-providers/index.ts";
import { startFakeAnthropic, startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createEngineFixture, type EngineFixture, type FixtureOptions } from "./engine-test-fixture.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const track = <T extends FakeProviderServer | EngineFixture>(resource: T): T => {
  cleanups.push(() => resource.close());
  return resource;
};

const withOpenAI = async (server: FakeProviderServer, options: FixtureOptions = {}) => {
  const fixture = track(
    await createEngineFixture({
      ...options,
      config: {
        providers: {
          openai: { apiKey: "sk-server-secret-123", baseUrl: server.baseUrl },
          anthropic: {},
          compatible: [],
        },
      },
    }),
  );
  await fixture.engine.start();
  return fixture;
};

const eventTypes = (fixture: EngineFixture, runId: string) =>
  fixture.eventsOf(runId).map((delivered) => delivered.event.type);

describe("engine retries", () => {
  test("429 with Retry-After is retried after the given delay, then succeeds", async () => {
    const openai = track(
      startFakeOpenAI([
        { type: "error", status: 429, retryAfter: "1", message: "Rate limit reached" },
        { type: "stream", tokens: ["fine"], usage: { input: 10, output: 1 } },
      ]),
    );
    const fixture = await withOpenAI(openai);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("fine");
    expect(ended.attempts).toBe(2);
    expect(openai.requests).toHaveLength(2);
    // Backoff here is ≤ 20 ms: only Retry-After explains a wait of a second.
    expect(openai.requests[1]!.receivedAt - openai.requests[0]!.receivedAt).toBeGreaterThanOrEqual(950);
    // The 429 consumed nothing: no retry cost, and no second run.started since no token went out.
    expect(ended.cost?.retries.total).toBe(0);
    expect(eventTypes(fixture, ended.id)).toEqual(["run.started", "run.step", "run.token", "run.completed"]);
  });

  test("500s until the attempts run out: failed with the provider's status and message", async () => {
    const openai = track(startFakeOpenAI({ type: "error", status: 500, message: "The server had an error" }));
    const fixture = await withOpenAI(openai);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("gave up after 3 attempts: openai returned 500: The server had an error");
    expect(ended.attempts).toBe(3);
    expect(openai.requests).toHaveLength(3);
    expect(ended.tokenUsage).toBeNull();
    expect(ended.cost?.total).toBe(0);
    expect(eventTypes(fixture, ended.id)).toEqual(["run.started", "run.step", "run.failed"]);
  });

  test("401 fails at once, with the key redacted from the provider's message", async () => {
    const openai = track(
      startFakeOpenAI({
        type: "error",
        status: 401,
        message: "Incorrect API key provided: sk-server-secret-123. You can find your API key at platform",
      }),
    );
    const fixture = await withOpenAI(openai);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(openai.requests).toHaveLength(1);
    expect(ended.error).toStartWith("openai returned 401: Incorrect API key provided: [redacted]");
    expect(ended.error).not.toContain("sk-server-secret-123");
  });

  test("a stream cut mid-way is retried: run.started again, token index back to 0, partial usage costed", async () => {
    const openai = track(
      startFakeOpenAI([
        { type: "stream", tokens: ["one", " two", " three"], cutAfterTokens: 2, tokenDelayMs: 15 },
        { type: "stream", tokens: ["all", " good"], usage: { input: 10, output: 2 } },
      ]),
    );
    const fixture = await withOpenAI(openai);
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("all good");
    expect(ended.attempts).toBe(2);
    expect(openai.streams[0]!.outcome).toBe("cut");

    const events = fixture.eventsOf(ended.id).map((delivered) => delivered.event);
    const started = events.flatMap((event) => (event.type === "run.started" ? [event.data.attempt] : []));
    expect(started).toEqual([1, 2]);
    const secondStart = events.findIndex((event) => event.type === "run.started" && event.data.attempt === 2);
    const afterRetry = events
      .slice(secondStart)
      .flatMap((event) => (event.type === "run.token" ? [event.data] : []));
    expect(afterRetry.map((token) => token.index)).toEqual([0, 1]);
    expect(afterRetry.map((token) => token.delta).join("")).toBe("all good");
    const beforeRetry = events.slice(0, secondStart).filter((event) => event.type === "run.token");
    expect(beforeRetry.length).toBeGreaterThan(0);
    // No usage came back on the cut stream: output estimated from chunks, input from the prompt size.
    expect(ended.cost?.retries.output).toBeGreaterThan(0);
    expect(ended.cost?.retries.input).toBeGreaterThan(0);
    expect(ended.cost?.total).toBeCloseTo(ended.cost!.success.total + ended.cost!.retries.total, 12);
  });

  test("Anthropic stream cut: the input announced at message_start goes to cost.retries", async () => {
    const anthropic = track(
      startFakeAnthropic([
        {
          type: "stream",
          tokens: ["a", "b", "c"],
          cutAfterTokens: 2,
          tokenDelayMs: 15,
          usage: { input: 1_000_000, output: 3 },
        },
        { type: "stream", tokens: ["ok"], usage: { input: 10, output: 1 } },
      ]),
    );
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "anthropic:claude-sonnet-4-5" },
        config: {
          providers: { openai: {}, anthropic: { apiKey: "ak", baseUrl: anthropic.baseUrl }, compatible: [] },
          // Pin a flat price so the figure is exact.
          priceOverrides: { "anthropic:claude-sonnet-4-5": { inputPerMillion: 3, outputPerMillion: 15 } },
        },
      }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.cost?.retries.input).toBe(3); // 1M announced prompt tokens × $3/M
  });

  test("a provider that goes silent hits the idle timeout and is retried", async () => {
    const openai = track(
      startFakeOpenAI([
        { type: "stream", tokens: ["stuck", "never"], hangAfterTokens: 1 },
        { type: "stream", tokens: ["recovered"] },
      ]),
    );
    const fixture = await withOpenAI(openai, { run: { idleTimeoutMs: 200 } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("recovered");
    // The hanging upstream stream was abandoned by the client, not left open.
    expect((await openai.waitForStreamEnd(0)).outcome).toBe("client-closed");
  });

  test("hanging on every attempt fails with the idle timeout", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["x"], hangAfterTokens: 0 }));
    const fixture = await withOpenAI(openai, { run: { idleTimeoutMs: 150, maxAttempts: 2 } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("gave up after 2 attempts: openai sent nothing for 150 ms (idle timeout)");
    expect(openai.requests).toHaveLength(2);
    expect((await openai.waitForStreamEnd(1)).outcome).toBe("client-closed");
    expect(openai.openStreams()).toBe(0);
  });

  test("the whole-attempt timeout stops a slow but chatty provider", async () => {
    const openai = track(
      startFakeOpenAI({ type: "stream", tokens: Array.from({ length: 100 }, () => "."), tokenDelayMs: 20 }),
    );
    const fixture = await withOpenAI(openai, { run: { attemptTimeoutMs: 200, maxAttempts: 1 } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.error).toBe("gave up after 1 attempt: openai call timed out after 200 ms");
    expect(ended.cost?.retries.output).toBeGreaterThan(0);
  });
});

describe("provider responses are bounded", () => {
  const MiB = 1024 * 1024;

  test("a stream with no newline fails at the line cap, once, and the upstream is dropped", async () => {
    const openai = track(startFakeOpenAI({ type: "flood", bytes: 256 * MiB }));
    const fixture = await withOpenAI(openai, { run: { maxResponseLineBytes: MiB } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id, 30_000);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      "openai provider response too large: a line passed 1048576 bytes without a newline",
    );
    expect(openai.requests).toHaveLength(1);
    const stream = await openai.waitForStreamEnd(0, 10_000);
    expect(stream.outcome).toBe("client-closed");
    // Cancelled near the cap, not after the 256 MiB (socket buffers allow some slack).
    expect(stream.tokensSent).toBeLessThan(32 * MiB);
  });

  test("the SDK path (Anthropic) is capped the same way", async () => {
    const anthropic = track(startFakeAnthropic({ type: "flood", bytes: 256 * MiB }));
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "anthropic:claude-haiku-4-5" },
        run: { maxResponseLineBytes: MiB },
        config: {
          providers: {
            openai: {},
            anthropic: { apiKey: "sk-ant-server", baseUrl: anthropic.baseUrl },
            compatible: [],
          },
        },
      }),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id, 30_000);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe(
      "anthropic provider response too large: a line passed 1048576 bytes without a newline",
    );
    expect(anthropic.requests).toHaveLength(1);
    expect((await anthropic.waitForStreamEnd(0, 10_000)).tokensSent).toBeLessThan(32 * MiB);
  });

  test("a body past the per-attempt cap fails, even with newlines in it", async () => {
    const openai = track(
      startFakeOpenAI({ type: "stream", tokens: Array.from({ length: 2_000 }, () => "x".repeat(1_000)) }),
    );
    const fixture = await withOpenAI(openai, { run: { maxResponseBytes: 512 * 1024 } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id, 30_000);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("openai provider response too large: the body passed 524288 bytes");
    expect(openai.requests).toHaveLength(1);
  });

  test("an output past maxOutputBytes fails the run, once; nothing of it is stored", async () => {
    const openai = track(
      startFakeOpenAI({ type: "stream", tokens: Array.from({ length: 300 }, () => "é".repeat(100)) }),
    );
    const fixture = await withOpenAI(openai, { run: { maxOutputBytes: 10_000 } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id, 30_000);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("openai output passed 10000 bytes");
    expect(ended.output).toBeNull();
    expect(openai.requests).toHaveLength(1);
    const tokens = fixture.eventsOf(ended.id).filter((delivered) => delivered.event.type === "run.token");
    // 200 bytes per token: 50 fit, the 51st crosses the cap and is not published.
    expect(tokens).toHaveLength(50);
  });

  test("a huge error body is cut at the line cap; a long error message is stored cut to 4 KiB", async () => {
    const flood = track(startFakeOpenAI({ type: "flood", status: 400, bytes: 50 * MiB }));
    const fixture = await withOpenAI(flood, { run: { maxResponseLineBytes: MiB } });
    const ended = await fixture.waitForEnd((await fixture.createRun()).id, 30_000);
    expect(ended.status).toBe("failed");
    expect(Buffer.byteLength(ended.error ?? "")).toBeLessThanOrEqual(4_096);
    expect(flood.requests).toHaveLength(1);

    const wordy = track(startFakeOpenAI({ type: "error", status: 400, message: "é".repeat(100_000) }));
    const second = await withOpenAI(wordy);
    const failed = await second.waitForEnd((await second.createRun()).id, 30_000);
    expect(failed.status).toBe("failed");
    expect(failed.error?.startsWith("openai returned 400: éé")).toBe(true);
    expect(failed.error?.endsWith("…[truncated]")).toBe(true);
    expect(Buffer.byteLength(failed.error ?? "")).toBeLessThanOrEqual(4_096);
    expect(Buffer.byteLength(failed.error ?? "")).toBeGreaterThan(4_000);
  });
});
