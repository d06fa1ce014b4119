import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../http/test-app.ts";
import { createFakeWorkflowServices, type FakeWorkflowServices } from "./testing/fake-workflow-services.ts";

let t: TestApp;
let fake: FakeWorkflowServices;

beforeAll(async () => {
  t = await createTestApp({
    // Getters: each test gets fresh fakes.
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
beforeEach(() => {
  fake = createFakeWorkflowServices();
});

const triage = {
  slug: "triage",
  description: "Classify, then answer.",
  inputs: { ticket: { type: "string" } },
  steps: [
    { id: "classify", prompt: "classify@production", inputs: { text: "{{inputs.ticket}}" } },
    { id: "answer", prompt: "answer", inputs: { category: "{{steps.classify.output}}" } },
  ],
  output: "{{steps.answer.output}}",
  tags: ["production"],
};
const TWO_MIB = "x".repeat(2 * 1024 * 1024);

const push = (json: unknown, key = t.keys.a) => t.request("/api/v1/workflows", { method: "POST", key, json });

async function expectError(response: Response, status: number, message?: string | RegExp) {
  const text = await response.text();
  expect(`${response.status} ${text}`).toStartWith(`${status} `);
  const body = JSON.parse(text) as { error: string; code: string };
  expect(typeof body.error).toBe("string");
  if (message !== undefined) expect(body.error).toMatch(message);
  return body;
}

describe("POST /api/v1/workflows", () => {
  test("201 with Location for a new version, 200 created:false for the same content, 201 v2 after a change", async () => {
    const first = await push(triage);
    expect(first.status).toBe(201);
    expect(first.headers.get("location")).toBe("/api/v1/workflows/triage/1");
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(await first.json()).toMatchObject({
      slug: "triage",
      version: 1,
      created: true,
      tags: ["production"],
    });
    expect(fake.calls[0]).toMatchObject({
      method: "workflows.push",
      tenantId: t.tenants.a,
      args: [[triage]],
    });

    const again = await push(triage);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ version: 1, created: false });
    const changed = await push({ ...triage, description: "v2" });
    expect(changed.status).toBe(201);
    expect(changed.headers.get("location")).toBe("/api/v1/workflows/triage/2");
  });

  test("a file the push checks refuse is the service's 400, naming the field", async () => {
    await expectError(await push({ ...triage, steps: [{ id: "Bad Id", prompt: "x" }] }), 400, /steps/);
  });

  test("order: 401, then 403, then 415, then 413, then 400; the service is never reached", async () => {
    const hostile = { method: "POST", headers: { "content-type": "text/plain" }, body: TWO_MIB };
    await expectError(await t.request("/api/v1/workflows", hostile), 401);
    await expectError(await t.request("/api/v1/workflows", { ...hostile, key: t.keys.inactive }), 403);
    await expectError(await t.request("/api/v1/workflows", { ...hostile, key: t.keys.a }), 415);
    const oversized = await t.request("/api/v1/workflows", {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "application/json" },
      body: `{${TWO_MIB}`,
    });
    await expectError(oversized, 413);
    for (const body of ["{", '{"slug": "triage",}', "", "[1,", `${"[".repeat(100)}${"]".repeat(100)}`]) {
      const malformed = await t.request("/api/v1/workflows", {
        method: "POST",
        key: t.keys.a,
        headers: { "content-type": "application/json" },
        body,
      });
      await expectError(malformed, 400);
    }
    expect(fake.calls).toHaveLength(0);
  });

  test("405 with Allow for another method", async () => {
    const response = await t.request("/api/v1/workflows", { method: "DELETE", key: t.keys.a });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, POST");
  });
});

describe("GET /api/v1/workflows, /{slug}/versions and /{slug}/{version}", () => {
  beforeEach(async () => {
    expect((await push(triage)).status).toBe(201);
    expect((await push({ ...triage, description: "v2", tags: [] })).status).toBe(201);
    fake.calls.length = 0;
  });

  test("the list pages with cursor and limit; unknown, repeated or out-of-range parameters are 400", async () => {
    const response = await t.request("/api/v1/workflows?limit=1", { key: t.keys.a });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      items: [{ slug: "triage", latestVersion: 2, tags: { production: 1 } }],
      nextCursor: null,
    });
    expect(fake.calls[0]).toMatchObject({ method: "workflows.list", args: [{ limit: 1 }] });
    for (const query of ["?q=x", "?limit=0", "?limit=201", "?limit=ten", "?limit=1&limit=2", "?cursor="]) {
      await expectError(await t.request(`/api/v1/workflows${query}`, { key: t.keys.a }), 400);
    }
    await expectError(await t.request("/api/v1/workflows?limit=1"), 401);
    // Another tenant sees none of A's workflows.
    expect(await (await t.request("/api/v1/workflows", { key: t.keys.b })).json()).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  test("versions: newest first, paged; an unknown, another tenant's or a malformed slug is a 404", async () => {
    const response = await t.request("/api/v1/workflows/triage/versions?limit=1", { key: t.keys.a });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { items: Array<{ version: number }>; nextCursor: string };
    expect(page.items.map((item) => item.version)).toEqual([2]);
    const next = await t.request(`/api/v1/workflows/triage/versions?cursor=${page.nextCursor}`, {
      key: t.keys.a,
    });
    expect(((await next.json()) as typeof page).items.map((item) => item.version)).toEqual([1]);
    await expectError(await t.request("/api/v1/workflows/triage/versions?extra=1", { key: t.keys.a }), 400);
    await expectError(await t.request("/api/v1/workflows/triage/versions", { key: t.keys.b }), 404);
    await expectError(await t.request("/api/v1/workflows/nope/versions", { key: t.keys.a }), 404);
    // Malformed: 404 before authentication.
    await expectError(await t.request("/api/v1/workflows/..%2Fetc/versions"), 404, "workflow not found");
  });

  test("a version by number, tag, latest or id, with an ETag and a 304 for If-None-Match", async () => {
    const latest = await t.request("/api/v1/workflows/triage/latest", { key: t.keys.a });
    expect(latest.status).toBe(200);
    const body = (await latest.json()) as { id: string; version: number; contentHash: string };
    expect(body.version).toBe(2);
    expect(latest.headers.get("etag")).toBe(`"${body.contentHash}"`);
    expect(latest.headers.get("cache-control")).toBe("private, no-cache");
    const byTag = await t.request("/api/v1/workflows/triage/production", { key: t.keys.a });
    expect(((await byTag.json()) as { version: number }).version).toBe(1);
    const byId = await t.request(`/api/v1/workflows/triage/${body.id}`, { key: t.keys.a });
    expect(((await byId.json()) as { version: number }).version).toBe(2);
    const notModified = await t.request("/api/v1/workflows/triage/2", {
      key: t.keys.a,
      headers: { "if-none-match": `W/"${body.contentHash}"` },
    });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe("");
  });

  test("another tenant's, an unknown and a malformed version are 404 (malformed before auth)", async () => {
    await expectError(await t.request("/api/v1/workflows/triage/1", { key: t.keys.b }), 404);
    await expectError(await t.request("/api/v1/workflows/triage/9", { key: t.keys.a }), 404);
    await expectError(await t.request("/api/v1/workflows/triage/nope-tag", { key: t.keys.a }), 404);
    for (const segment of ["bad%20tag", "..%2F1", "-x", "%E0%A4%A"]) {
      await expectError(
        await t.request(`/api/v1/workflows/triage/${segment}`),
        404,
        "workflow version not found",
      );
    }
    await expectError(await t.request("/api/v1/workflows/Triage/1"), 404, "workflow not found");
    await expectError(await t.request("/api/v1/workflows/triage/1"), 401);
  });
});

describe("PUT /api/v1/workflows/{slug}/tags/{tag}", () => {
  beforeEach(async () => {
    await push(triage);
    await push({ ...triage, description: "v2", tags: [] });
    fake.calls.length = 0;
  });
  const setTag = (tag: string, json: unknown, key = t.keys.a) =>
    t.request(`/api/v1/workflows/triage/tags/${tag}`, { method: "PUT", key, json });

  test("200 moves the tag; the version read by the tag follows it", async () => {
    const moved = await setTag("production", { version: 2 });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ slug: "triage", version: 2, tags: ["production"] });
    expect(fake.calls[0]).toMatchObject({
      method: "workflows.tag",
      args: ["triage", "production", { version: 2 }],
    });
    const read = await t.request("/api/v1/workflows/triage/production", { key: t.keys.a });
    expect(((await read.json()) as { version: number }).version).toBe(2);
  });

  test("400 bad body, 404 unknown version or another tenant's workflow, 415, 403, 401", async () => {
    await expectError(await setTag("production", { version: "2" }), 400);
    await expectError(await setTag("production", { version: 2, extra: true }), 400);
    await expectError(await setTag("production", { version: 7 }), 404);
    await expectError(await setTag("production", { version: 1 }, t.keys.b), 404);
    const text = await t.request("/api/v1/workflows/triage/tags/production", {
      method: "PUT",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: "version=1",
    });
    await expectError(text, 415);
    await expectError(await setTag("production", { version: 1 }, t.keys.inactive), 403);
    await expectError(await t.request("/api/v1/workflows/triage/tags/production", { method: "PUT" }), 401);
    await expectError(await t.request("/api/v1/workflows/BAD/tags/production", { method: "PUT" }), 404);
    // Tenant A's tag did not move.
    const read = await t.request("/api/v1/workflows/triage/production", { key: t.keys.a });
    expect(((await read.json()) as { version: number }).version).toBe(1);
  });
});
