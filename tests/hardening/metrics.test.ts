/**
 * GET /metrics on the real server: request counters by route template and status, run outcome
 * counters, the queue depth gauge, the open streams gauge and provider call latency all appear
 * and move with what the server does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeProviderServer, type FakeReply, startFakeOpenAI } from "@promptrun/core/testing";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";
import { echoPrompt, metricSum, pushPrompts, scrapeMetrics, waitUntil } from "./support.ts";

let server: TestServer;
let provider: FakeProviderServer;

/** The fake provider answers by the marker in the last message: `fail-twice`, `refuse`, else a stream. */
const scriptFor = (() => {
  const failures = new Map<string, number>();
  return (body: unknown): FakeReply => {
    const text = JSON.stringify(body);
    const marker = /marker-[a-z0-9-]+/.exec(text)?.[0] ?? "none";
    if (marker.startsWith("marker-refuse")) return { type: "error", status: 400, message: "bad request" };
    if (marker.startsWith("marker-fail-twice")) {
      const seen = failures.get(marker) ?? 0;
      failures.set(marker, seen + 1);
      if (seen < 2) return { type: "error", status: 500, message: "upstream broke" };
    }
    return { type: "stream", tokens: ["fine", " thanks"] };
  };
})();

beforeAll(async () => {
  provider = startFakeOpenAI((request) => scriptFor(request.body));
  server = await startServer({
    env: {
      PROMPTRUN_PROVIDERS: `fake=${provider.baseUrl}`,
      PROMPTRUN_TENANT_CONCURRENCY: "1",
      PROMPTRUN_RETRY_BASE_MS: "10",
    },
  });
  await pushPrompts(server, server.tenantId, [
    echoPrompt("slow", 150),
    { ...echoPrompt("remote"), model: "fake:any" },
  ]);
});
afterAll(async () => {
  await server?.dispose();
  await provider?.close();
});

const startRun = async (slug: string, text: string, extra: Record<string, unknown> = {}) => {
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, {
    method: "POST",
    json: { inputs: { text }, ...extra },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
};

describe("/metrics", () => {
  test("HTTP request counters move by route template and status", async () => {
    const route = "/api/v1/promptruns/:id";
    const before = await scrapeMetrics(server);
    for (let index = 0; index < 3; index++) await api(server, `/api/v1/promptruns/${crypto.randomUUID()}`);
    await api(server, `/api/v1/promptruns/${crypto.randomUUID()}`, { key: null });
    const after = await scrapeMetrics(server);
    const delta = (status: string) =>
      metricSum(after, "promptrun_http_requests_total", { route, status }) -
      metricSum(before, "promptrun_http_requests_total", { route, status });
    expect(delta("404")).toBe(3);
    expect(delta("401")).toBe(1);
    expect(
      metricSum(after, "promptrun_http_request_duration_seconds_count", { route, status: "404" }),
    ).toBeGreaterThanOrEqual(3);
    // Raw ids never become label values.
    expect(after.some((sample) => /[0-9a-f]{8}-[0-9a-f]{4}/.test(sample.labels.route ?? ""))).toBe(false);
  });

  test("the open streams gauge follows SSE connections", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = (await (
      await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" })
    ).json()) as { token: string; url: string };
    const gauge = async () => metricSum(await scrapeMetrics(server), "promptrun_sse_open_streams");
    const baseline = await gauge();
    const connections = [await SseConnection.open(url, { token }), await SseConnection.open(url, { token })];
    for (const connection of connections) await connection.waitFor((event) => event.event === "ready");
    expect(await gauge()).toBe(baseline + 2);
    for (const connection of connections) connection.close();
    await waitUntil(async () => (await gauge()) === baseline, `streams gauge back to ${baseline}`);
  });

  test("the queue depth gauge rises while runs wait and returns to zero; outcomes are counted", async () => {
    const before = await scrapeMetrics(server);
    const thread = crypto.randomUUID();
    // One tenant slot: the first run executes, the others wait in the queue.
    const first = await startRun("slow", "one two three four five six", { thread, channel: "a" });
    const waiting = [
      await startRun("slow", "seven eight", { channel: "b", priority: "low" }),
      await startRun("slow", "nine ten", { channel: "c", priority: "low" }),
    ];
    const during = await scrapeMetrics(server);
    expect(metricSum(during, "promptrun_queue_depth", { priority: "low" })).toBeGreaterThanOrEqual(1);
    const cancelled = await api(server, `/api/v1/promptruns/${waiting[1]}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    for (const id of [first, waiting[0]!]) expect((await waitForRun(server, id)).status).toBe("completed");

    const after = await scrapeMetrics(server);
    expect(metricSum(after, "promptrun_queue_depth")).toBe(0);
    const finished = (samples: typeof after, outcome: string) =>
      metricSum(samples, "promptrun_runs_finished_total", { outcome, model: "dev:echo" });
    expect(finished(after, "completed") - finished(before, "completed")).toBe(2);
    expect(
      metricSum(after, "promptrun_run_duration_seconds_count", { model: "dev:echo" }) -
        metricSum(before, "promptrun_run_duration_seconds_count", { model: "dev:echo" }),
    ).toBeGreaterThanOrEqual(2);
  });

  test("provider calls and their latency are counted per attempt and outcome; failed runs are counted", async () => {
    const model = "fake:any";
    const before = await scrapeMetrics(server);
    const retried = await startRun("remote", `marker-fail-twice-${crypto.randomUUID().slice(0, 8)}`);
    expect((await waitForRun(server, retried)).status).toBe("completed");
    const refused = await startRun("remote", "marker-refuse");
    const failed = await waitForRun(server, refused);
    expect(failed.status).toBe("failed");

    const after = await scrapeMetrics(server);
    const delta = (name: string, labels: Record<string, string>) =>
      metricSum(after, name, labels) - metricSum(before, name, labels);
    expect(delta("promptrun_provider_calls_total", { model, outcome: "ok" })).toBe(1);
    expect(delta("promptrun_provider_calls_total", { model, outcome: "error" })).toBe(3);
    expect(delta("promptrun_provider_call_duration_seconds_count", { model })).toBe(4);
    expect(delta("promptrun_provider_call_duration_seconds_sum", { model })).toBeGreaterThan(0);
    expect(delta("promptrun_runs_finished_total", { model, outcome: "completed" })).toBe(1);
    expect(delta("promptrun_runs_finished_total", { model, outcome: "failed" })).toBe(1);
  });
});
