/**
 * GET /metrics on the real server: request counters by route template and status, run outcome
 * counters, the queue depth gauge, the open streams gauge and provider call latency all appear
 * and move with what the server does; the endpoint needs PROMPTRUN_METRICS_TOKEN when set, model
 * labels stay bounded whatever tenants name, and the exposition passes `promtool check metrics`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OTHER_MODEL_LABEL } from "@promptrun/core";
import { type FakeProviderServer, type FakeReply, startFakeOpenAI } from "@promptrun/core/testing";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";
import {
  echoPrompt,
  metricSum,
  pushPrompts,
  scrapeMetrics as scrapeWithToken,
  waitUntil,
} from "./support.ts";

const METRICS_TOKEN = "metrics-token-for-the-scraper-0123";
/** A model name no price data set knows, far longer than any label should be. */
const LONG_MODEL = `fake:${"tenant-chosen-model-name-".repeat(40)}`;

let server: TestServer;
const scrapeMetrics = (target: TestServer) => scrapeWithToken(target, METRICS_TOKEN);
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
      PROMPTRUN_METRICS_TOKEN: METRICS_TOKEN,
    },
  });
  await pushPrompts(server, server.tenantId, [
    echoPrompt("slow", 150),
    { ...echoPrompt("remote"), model: "fake:any" },
    { ...echoPrompt("long-model"), model: LONG_MODEL },
    ...Array.from({ length: 5 }, (_, index) => ({
      ...echoPrompt(`varied-${index}`),
      model: `fake:m-${index}`,
    })),
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
    // A model the server has no price for is counted under `other`, never under its own name.
    const model = OTHER_MODEL_LABEL;
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

  test("without the configured bearer token /metrics is 401", async () => {
    const status = async (headers: Record<string, string>) =>
      (await fetch(`${server.url}/metrics`, { headers })).status;
    expect(await status({})).toBe(401);
    expect(await status({ authorization: `Bearer ${METRICS_TOKEN}x` })).toBe(401);
    expect(await status({ authorization: `Basic ${METRICS_TOKEN}` })).toBe(401);
    expect(await status({ authorization: METRICS_TOKEN })).toBe(401);
    const refused = await fetch(`${server.url}/metrics`);
    expect(((await refused.json()) as { error: string }).error).toContain("PROMPTRUN_METRICS_TOKEN");
    expect(await status({ authorization: `bearer ${METRICS_TOKEN}` })).toBe(200);
  });

  test("model labels are bounded: unknown, long or varied model names collapse to `other`", async () => {
    const slugs = ["long-model", ...Array.from({ length: 5 }, (_, index) => `varied-${index}`)];
    const ids = await Promise.all(slugs.map((slug) => startRun(slug, "hello")));
    for (const id of ids) await waitForRun(server, id);
    const response = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await response.text();
    expect(text).not.toContain("tenant-chosen-model-name");
    expect(text).not.toContain("fake:m-");
    const models = new Set([...text.matchAll(/model="([^"]*)"/g)].map((match) => match[1]!));
    expect([...models].every((model) => model.length <= 64)).toBe(true);
    expect(models.has(OTHER_MODEL_LABEL)).toBe(true);
  });

  test("every exposed metric passes `promtool check metrics`", async () => {
    const promtool = Bun.which("promtool");
    if (promtool === null) {
      console.log(
        "skip: promtool not installed (Debian: apt-get install prometheus); exposition not checked",
      );
      return;
    }
    const response = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const check = Bun.spawn([promtool, "check", "metrics"], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    check.stdin.write(await response.text());
    await check.stdin.end();
    const [code, stdout, stderr] = await Promise.all([
      check.exited,
      new Response(check.stdout).text(),
      new Response(check.stderr).text(),
    ]);
    expect(`${stdout}${stderr}`.trim()).toBe("");
    expect(code).toBe(0);
  });
});
