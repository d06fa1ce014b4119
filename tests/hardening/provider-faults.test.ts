/**
 * Provider faults end to end, against a fake OpenAI-compatible server on 127.0.0.1: 429 with
 * Retry-After, 500s, a connection cut mid-stream, a stream that hangs mid-way (idle timeout), and
 * a provider that never recovers. Runs are retried and complete, or fail cleanly with a message;
 * subscribers see the restart; the API never answers 5xx meanwhile.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeProviderServer, type FakeReply, startFakeOpenAI } from "@promptrun/core/testing";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { assembleRunText, SseConnection } from "../support/sse.ts";
import { echoPrompt, pushPrompts } from "./support.ts";

let server: TestServer;
let provider: FakeProviderServer;

/** Replies per scenario (the marker in the message), in order; the last one repeats. */
const scenarios: Record<string, FakeReply[]> = {
  "rate-limited": [
    { type: "error", status: 429, message: "slow down", retryAfter: "1" },
    { type: "stream", tokens: ["after", " the", " wait"] },
  ],
  "server-errors": [
    { type: "error", status: 500 },
    { type: "error", status: 503 },
    { type: "stream", tokens: ["third", " time", " lucky"] },
  ],
  "cut-mid-stream": [
    {
      type: "stream",
      tokens: ["partial", " words", " lost", " here"],
      cutAfterTokens: 2,
      // Paced, so the first tokens leave the fake before the cut.
      tokenDelayMs: 30,
    },
    { type: "stream", tokens: ["whole", " answer"] },
  ],
  "hang-mid-stream": [
    { type: "stream", tokens: ["stuck", " forever"], hangAfterTokens: 1 },
    { type: "stream", tokens: ["unstuck"] },
  ],
  "never-recovers": [{ type: "error", status: 502, message: "bad gateway" }],
};
const callsPerMarker = new Map<string, number>();

beforeAll(async () => {
  provider = startFakeOpenAI((request) => {
    const marker = /scenario-([a-z-]+)-[0-9a-f]{8}/.exec(JSON.stringify(request.body));
    const replies = scenarios[marker?.[1] ?? ""] ?? [{ type: "stream", tokens: ["default"] }];
    const seen = callsPerMarker.get(marker?.[0] ?? "") ?? 0;
    callsPerMarker.set(marker?.[0] ?? "", seen + 1);
    return replies[Math.min(seen, replies.length - 1)]!;
  });
  server = await startServer({
    env: {
      PROMPTRUN_PROVIDERS: `fake=${provider.baseUrl}`,
      PROMPTRUN_MAX_ATTEMPTS: "3",
      PROMPTRUN_RETRY_BASE_MS: "20",
      PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS: "600",
      PROMPTRUN_PRICES: JSON.stringify({
        "fake:any": { inputPerMillion: 1_000_000, outputPerMillion: 1_000_000 },
      }),
    },
  });
  await pushPrompts(server, server.tenantId, [{ ...echoPrompt("remote"), model: "fake:any" }]);
});
afterAll(async () => {
  await server?.dispose();
  await provider?.close();
});

/** Starts a run of one scenario on a fresh thread with a subscriber attached first. */
async function runScenario(scenario: string) {
  const marker = `scenario-${scenario}-${crypto.randomUUID().slice(0, 8)}`;
  const thread = crypto.randomUUID();
  const { token, url } = (await (
    await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" })
  ).json()) as { token: string; url: string };
  const stream = await SseConnection.open(url, { token });
  await stream.waitFor((event) => event.event === "ready");
  const requestsBefore = provider.requests.length;
  const created = await api(server, "/api/v1/prompts/remote/latest/runs", {
    method: "POST",
    json: { inputs: { text: marker }, thread },
  });
  expect(created.status).toBe(202);
  const { id } = (await created.json()) as { id: string };
  const run = await waitForRun(server, id, 30_000);
  await stream.waitFor(
    (event) => (event.event === "run.completed" || event.event === "run.failed") && event.data.runId === id,
  );
  stream.close();
  const requests = provider.requests
    .slice(requestsBefore)
    .filter((request) => JSON.stringify(request.body).includes(marker));
  return { id, run, events: stream.events, requests };
}

type Cost = { retries: { total: number }; total: number };

describe("provider faults", () => {
  test("429 with Retry-After: the retry waits at least that long, then the run completes", async () => {
    const { run, requests } = await runScenario("rate-limited");
    expect(run).toMatchObject({ status: "completed", output: "after the wait", error: null, attempts: 2 });
    expect(requests.length).toBe(2);
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(950);
  });

  test("500 and 503 are retried with backoff until a stream succeeds", async () => {
    const { run, requests } = await runScenario("server-errors");
    expect(run).toMatchObject({ status: "completed", output: "third time lucky", attempts: 3 });
    expect(requests.length).toBe(3);
  });

  test("a connection cut mid-stream restarts the text for subscribers and bills the lost tokens as retries", async () => {
    const { id, run, events } = await runScenario("cut-mid-stream");
    expect(run).toMatchObject({ status: "completed", output: "whole answer", attempts: 2 });
    const starts = events.filter((event) => event.event === "run.started" && event.data.runId === id);
    expect(starts.length).toBe(2);
    // The lost attempt's tokens reached the subscriber before the restart.
    const firstStart = events.findIndex((event) => event.event === "run.started");
    const secondStart = events.findIndex(
      (event, index) => index > firstStart && event.event === "run.started",
    );
    const lost = events.slice(firstStart, secondStart).filter((event) => event.event === "run.token");
    expect(lost.map((event) => event.data.delta).join("")).toStartWith("partial");
    expect(assembleRunText(events, id)).toBe("whole answer");
    // Priced at $1 per token (PROMPTRUN_PRICES): what the lost attempt consumed is billed as retries.
    const cost = run.cost as Cost;
    expect(cost.retries.total).toBeGreaterThan(0);
    expect(cost.total).toBeCloseTo(cost.retries.total + (run.tokenUsage as { total: number }).total, 6);
    expect((run.tokenUsage as { output: number }).output).toBe(2);
  });

  test("a stream that hangs mid-way is abandoned after the idle timeout and retried", async () => {
    const before = provider.streams.length;
    const { run, requests } = await runScenario("hang-mid-stream");
    expect(run).toMatchObject({ status: "completed", output: "unstuck", attempts: 2 });
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(550);
    // The hung connection was closed by the server, not left open.
    const hung = provider.streams.slice(before).find((stream) => stream.requestIndex === requests[0]!.index);
    expect(hung?.outcome).toBe("client-closed");
  });

  test("a provider that never recovers: the run fails with a message, cost but no usage; the API stays healthy", async () => {
    const { run, requests } = await runScenario("never-recovers");
    expect(requests.length).toBe(3);
    expect(run).toMatchObject({ status: "failed", output: null, tokenUsage: null, attempts: 3 });
    expect(String(run.error)).toContain("gave up after 3 attempts");
    expect(run.cost).not.toBeNull();
    expect(typeof run.finishedAt).toBe("string");
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
