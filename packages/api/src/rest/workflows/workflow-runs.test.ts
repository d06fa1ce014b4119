import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { isUuid } from "@promptrun/contract";
import { PromptrunError, rateLimited } from "@promptrun/core";
import { createTestApp, type TestApp } from "../../http/test-app.ts";
import { createFakeWorkflowServices, type FakeWorkflowServices } from "./testing/fake-workflow-services.ts";

let t: TestApp;
let fake: FakeWorkflowServices;

beforeAll(async () => {
  t = await createTestApp({
    wrapServices: (services) => ({
      ...services,
      get workflows() {
        return fake.workflows;
      },
      get workflowRuns() {
        return fake.workflowRuns;
      },
    }),
  });
});
afterAll(async () => {
  await t.dispose();
});
beforeEach(async () => {
  fake = createFakeWorkflowServices();
  await fake.workflows.push(t.tenants.a, [
    {
      slug: "triage",
      inputs: { ticket: { type: "string" } },
      steps: [{ id: "classify", prompt: "classify", inputs: { text: "{{inputs.ticket}}" } }],
    },
  ]);
  fake.calls.length = 0;
});

const RUNS = "/api/v1/workflows/triage/latest/runs";
const TWO_MIB = "x".repeat(2 * 1024 * 1024);

const create = (init: { key?: string; json?: unknown; headers?: Record<string, string> } = {}) =>
  t.request(RUNS, { method: "POST", key: t.keys.a, json: { inputs: { ticket: "hi" } }, ...init });

async function createdRun(): Promise<{ id: string; thread: string }> {
  const response = await create();
  expect(response.status).toBe(202);
  return (await response.json()) as { id: string; thread: string };
}

async function expectError(response: Response, status: number, message?: string | RegExp) {
  const text = await response.text();
  expect(`${response.status} ${text}`).toStartWith(`${status} `);
  const body = JSON.parse(text) as { error: string; code: string };
  if (message !== undefined) expect(body.error).toMatch(message);
  return body;
}

describe("POST /api/v1/workflows/{slug}/{version}/runs", () => {
  test("202 {id, thread} with Location and RateLimit headers; the run reads back pending", async () => {
    const thread = crypto.randomUUID();
    const response = await create({ json: { inputs: { ticket: "hi" }, thread, metadata: { team: "x" } } });
    expect(response.status).toBe(202);
    const body = (await response.json()) as { id: string; thread: string };
    expect(Object.keys(body).sort()).toEqual(["id", "thread"]);
    expect(isUuid(body.id)).toBe(true);
    expect(body.thread).toBe(thread);
    expect(response.headers.get("location")).toBe(`/api/v1/workflowruns/${body.id}`);
    expect(response.headers.get("ratelimit-limit")).toBe("200");
    expect(response.headers.get("idempotent-replayed")).toBeNull();
    expect(fake.calls[0]).toMatchObject({
      method: "workflowRuns.create",
      tenantId: t.tenants.a,
      args: ["triage", "latest", { inputs: { ticket: "hi" }, thread, metadata: { team: "x" } }, undefined],
    });
    const read = await t.request(`/api/v1/workflowruns/${body.id}`, { key: t.keys.a });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      id: body.id,
      status: "pending",
      phase: "queued",
      workflow: { slug: "triage", version: 1 },
      steps: [{ id: "classify", status: "pending", runId: null }],
    });
  });

  test("Idempotency-Key: the same request replays (header), another body is 409, a bad key is 400", async () => {
    const headers = { "idempotency-key": "order-42" };
    const first = await create({ headers });
    expect(first.status).toBe(202);
    const replay = await create({ headers });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(await first.json());
    expect(fake.calls[0]?.args[3]).toEqual({ idempotencyKey: "order-42" });
    await expectError(await create({ headers, json: { inputs: { ticket: "other" } } }), 409);
    const tooLong = { "idempotency-key": "k".repeat(256) };
    await expectError(await create({ headers: tooLong }), 400, "Idempotency-Key");
    // An unknown workflow outranks the malformed key.
    const unknown = await t.request("/api/v1/workflows/nope/latest/runs", {
      method: "POST",
      key: t.keys.a,
      headers: tooLong,
      json: { inputs: {} },
    });
    await expectError(unknown, 404);
    expect(fake.calls.filter((call) => call.method === "workflowRuns.create")).toHaveLength(3);
  });

  test("order: malformed path 404, then 401, 403, 415, 413, malformed JSON 400; the service is never reached", async () => {
    const hostile = { method: "POST", headers: { "content-type": "text/plain" }, body: TWO_MIB };
    for (const path of [
      "/api/v1/workflows/..%2Fetc/latest/runs",
      "/api/v1/workflows/triage/bad%20tag/runs",
    ]) {
      await expectError(await t.request(path, hostile), 404);
    }
    await expectError(await t.request(RUNS, hostile), 401);
    await expectError(await t.request(RUNS, { ...hostile, key: "pr_nope" }), 401);
    await expectError(await t.request(RUNS, { ...hostile, key: t.keys.inactive }), 403);
    await expectError(await t.request(RUNS, { ...hostile, key: t.keys.a }), 415);
    const json = { "content-type": "application/json" };
    await expectError(
      await t.request(RUNS, { method: "POST", key: t.keys.a, headers: json, body: TWO_MIB }),
      413,
    );
    for (const body of ["{", '{"inputs": }', "null x"]) {
      await expectError(await t.request(RUNS, { method: "POST", key: t.keys.a, headers: json, body }), 400);
    }
    expect(fake.calls).toHaveLength(0);
  });

  test("the service's answers: unknown workflow 404, bad body 400, another tenant's workflow 404", async () => {
    await expectError(
      await t.request("/api/v1/workflows/nope/latest/runs", { method: "POST", key: t.keys.a, json: {} }),
      404,
    );
    await expectError(await create({ json: { inputs: {}, channel: "x" } }), 400);
    await expectError(await create({ key: t.keys.b }), 404);
  });

  test("a 429 carries Retry-After and the RateLimit headers; a 503 passes through", async () => {
    fake.failNextCreate(rateLimited("rate limit exceeded", 3));
    const limited = await create();
    await expectError(limited, 429);
    expect(limited.headers.get("retry-after")).toBe("3");
    expect(limited.headers.get("ratelimit-limit")).toBe("200");
    fake.failNextCreate(new PromptrunError("unavailable", "store busy", { retryAfterSeconds: 1 }));
    const unavailable = await create();
    await expectError(unavailable, 503);
    expect(unavailable.headers.get("retry-after")).toBe("1");
  });
});

describe("GET /api/v1/workflowruns/{id} and POST /api/v1/workflowruns/{id}/cancel", () => {
  test("cancel: 200 failed 'cancelled' with cancelled steps; again 409; any body is ignored", async () => {
    const { id } = await createdRun();
    const cancelled = await t.request(`/api/v1/workflowruns/${id}/cancel`, {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: TWO_MIB,
    });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({
      id,
      status: "failed",
      error: "cancelled",
      steps: [{ status: "cancelled" }],
    });
    await expectError(
      await t.request(`/api/v1/workflowruns/${id}/cancel`, { method: "POST", key: t.keys.a }),
      409,
    );
  });

  test("another tenant's run is a 404 on read and cancel, and stays pending; malformed ids are 404 before auth", async () => {
    const { id } = await createdRun();
    await expectError(await t.request(`/api/v1/workflowruns/${id}`, { key: t.keys.b }), 404);
    await expectError(
      await t.request(`/api/v1/workflowruns/${id}/cancel`, { method: "POST", key: t.keys.b }),
      404,
    );
    await expectError(await t.request(`/api/v1/workflowruns/${crypto.randomUUID()}`, { key: t.keys.a }), 404);
    for (const bad of ["nope", "..%2F..%2Fetc", `${id}x`]) {
      await expectError(await t.request(`/api/v1/workflowruns/${bad}`), 404, "workflow run not found");
      await expectError(await t.request(`/api/v1/workflowruns/${bad}/cancel`, { method: "POST" }), 404);
    }
    await expectError(await t.request(`/api/v1/workflowruns/${id}`), 401);
    const run = await (await t.request(`/api/v1/workflowruns/${id}`, { key: t.keys.a })).json();
    expect(run).toMatchObject({ status: "pending" });
    // A tenant whose subscription lapsed may still read and cancel (no 403).
    expect((await t.request(`/api/v1/workflowruns/${id}`, { key: t.keys.inactive })).status).toBe(404);
  });

  test("405 with Allow on the run paths", async () => {
    const id = crypto.randomUUID();
    const put = await t.request(`/api/v1/workflowruns/${id}`, { method: "PUT", key: t.keys.a });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD");
    const get = await t.request(`/api/v1/workflowruns/${id}/cancel`, { key: t.keys.a });
    expect(get.headers.get("allow")).toBe("POST");
    const runs = await t.request("/api/v1/workflows/triage/latest/runs", { key: t.keys.a });
    expect(runs.headers.get("allow")).toBe("POST");
  });
});

describe("GET /api/v1/workflowruns", () => {
  test("newest first, filters handed to the service, cursor and limit as the page", async () => {
    const first = await createdRun();
    const second = await createdRun();
    fake.complete(first.id, "done");
    const all = await t.request("/api/v1/workflowruns", { key: t.keys.a });
    expect(all.status).toBe(200);
    const page = (await all.json()) as { items: Array<{ id: string }>; nextCursor: string | null };
    expect(page.items.map((run) => run.id)).toEqual([second.id, first.id]);

    const query = `workflow=triage&version=1&status=completed&thread=${first.thread}&limit=5&createdAfter=2020-01-01T00:00:00Z`;
    const filtered = await t.request(`/api/v1/workflowruns?${query}`, { key: t.keys.a });
    expect(filtered.status).toBe(200);
    expect(((await filtered.json()) as typeof page).items.map((run) => run.id)).toEqual([first.id]);
    expect(fake.calls.at(-1)).toMatchObject({
      method: "workflowRuns.list",
      tenantId: t.tenants.a,
      args: [
        {
          workflow: "triage",
          version: 1,
          status: "completed",
          thread: first.thread,
          createdAfter: "2020-01-01T00:00:00Z",
        },
        { cursor: null, limit: 5 },
      ],
    });
    const tenantB = await t.request("/api/v1/workflowruns", { key: t.keys.b });
    expect(((await tenantB.json()) as typeof page).items).toEqual([]);
  });

  test("400 naming an unknown, repeated or malformed parameter; 401 without a key", async () => {
    fake.calls.length = 0;
    const cases: Array<[string, RegExp]> = [
      ["prompt=triage", /unknown filter 'prompt'/],
      ["metadata.team=x&channel=a", /unknown filters 'metadata.team', 'channel'/],
      ["status=running", /status/],
      ["version=1", /version needs workflow/],
      ["workflow=triage&version=0", /version/],
      ["thread=not-a-uuid", /thread/],
      ["limit=0", /limit/],
      ["limit=500", /limit/],
      ["createdAfter=2020-01-01", /createdAfter/],
      ["status=pending&status=failed", /more than once/],
    ];
    for (const [query, message] of cases) {
      await expectError(await t.request(`/api/v1/workflowruns?${query}`, { key: t.keys.a }), 400, message);
    }
    expect(fake.calls).toHaveLength(0);
    await expectError(await t.request("/api/v1/workflowruns"), 401);
  });
});
