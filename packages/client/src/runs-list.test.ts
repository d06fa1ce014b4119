import { expect, test } from "bun:test";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient, type FetchFunction } from "./promptrun-client.ts";

const run = (id: string) => ({
  id,
  thread: "0190c8a0-0000-7000-8000-000000000001",
  channel: "default",
  prompt: { slug: "greet", version: 1, id: "0190c8a0-0000-7000-8000-000000000002" },
  priority: "normal",
  attempts: 0,
  environment: "production",
  status: "pending",
  phase: "queued",
  requiredAction: null,
  steps: [],
  retrieval: [],
  citations: [],
  workflowRun: null,
  metadata: {},
  output: null,
  outputJson: null,
  finishReason: null,
  memory: null,
  error: null,
  tokenUsage: null,
  cost: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  startedAt: null,
  finishedAt: null,
});

/** A fetch that answers each request with the next body and records the URLs asked for. */
const scripted = (bodies: unknown[], status = 200) => {
  const urls: URL[] = [];
  const fetch: FetchFunction = async (input) => {
    urls.push(new URL(String(input)));
    return Response.json(bodies.shift(), { status });
  };
  return { urls, client: createPromptrunClient({ baseUrl: "http://promptrun.test", apiKey: "pr_k", fetch }) };
};

test("runs.list sends every filter and metadata.<key>, and returns the page", async () => {
  const { urls, client } = scripted([
    { items: [run("0190c8a0-0000-7000-8000-00000000000a")], nextCursor: null },
  ]);
  const page = await client.runs.list({
    status: "pending",
    prompt: "greet",
    version: 2,
    metadata: { customer: "acme", tier: "gold" },
    createdAfter: "2026-01-01T00:00:00Z",
    limit: 10,
  });
  expect(page.items.map((item) => item.id)).toEqual(["0190c8a0-0000-7000-8000-00000000000a"]);
  const url = urls[0]!;
  expect(url.pathname).toBe("/api/v1/promptruns");
  expect(Object.fromEntries(url.searchParams)).toEqual({
    status: "pending",
    prompt: "greet",
    version: "2",
    "metadata.customer": "acme",
    "metadata.tier": "gold",
    createdAfter: "2026-01-01T00:00:00Z",
    limit: "10",
  });
});

test("runs.pages follows nextCursor until the last page", async () => {
  const { urls, client } = scripted([
    { items: [run("0190c8a0-0000-7000-8000-00000000000b")], nextCursor: "c1" },
    { items: [run("0190c8a0-0000-7000-8000-00000000000c")], nextCursor: null },
  ]);
  const ids: string[] = [];
  for await (const page of client.runs.pages({ status: "pending", limit: 1 })) {
    ids.push(...page.items.map((item) => item.id));
  }
  expect(ids).toEqual(["0190c8a0-0000-7000-8000-00000000000b", "0190c8a0-0000-7000-8000-00000000000c"]);
  expect(urls.map((url) => url.searchParams.get("cursor"))).toEqual([null, "c1"]);
  expect(urls.every((url) => url.searchParams.get("status") === "pending")).toBe(true);
});

test("usage sends dates as ISO text and returns the items; a 400 is an ApiError", async () => {
  const item = {
    key: "greet",
    runs: 2,
    completed: 1,
    failed: 1,
    tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
    cost: { success: 0.5, retries: 0, total: 0.5 },
    unpricedRuns: 0,
  };
  const { urls, client } = scripted([{ items: [item] }]);
  const usage = await client.usage({
    groupBy: "prompt",
    from: new Date("2026-01-01T00:00:00Z"),
    to: "2026-02-01",
  });
  expect(usage.items).toEqual([item]);
  expect(Object.fromEntries(urls[0]!.searchParams)).toEqual({
    groupBy: "prompt",
    from: "2026-01-01T00:00:00.000Z",
    to: "2026-02-01",
  });
  const failing = scripted([{ error: "unknown groupBy", code: "invalid" }], 400);
  await expect(failing.client.usage({ from: "2026-01-01" })).rejects.toBeInstanceOf(ApiError);
});
