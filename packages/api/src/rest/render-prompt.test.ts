import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../http/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ engine: { rateLimit: { perSecond: 0.001, burst: 3 } } });
});
afterAll(async () => {
  await t.dispose();
});

const RENDER = "/api/v1/prompts/greet/latest/render";
const TWO_MIB = "x".repeat(2 * 1024 * 1024);

async function expectError(response: Response, status: number, message?: string | RegExp) {
  const text = await response.text();
  expect(`${response.status} ${text}`).toStartWith(`${status} `);
  const body = JSON.parse(text) as { error: string; code: string };
  if (message !== undefined) expect(body.error).toMatch(message);
  return body;
}

describe("POST /api/v1/prompts/{slug}/{version}/render: error order", () => {
  test("a malformed path (404) beats a missing key; a missing key (401) beats content type and size", async () => {
    await expectError(await t.request("/api/v1/prompts/NOT_A_SLUG/latest/render", { method: "POST" }), 404);
    const violating = { method: "POST", headers: { "content-type": "text/plain" }, body: TWO_MIB };
    await expectError(await t.request(RENDER, violating), 401);
  });

  test("an inactive subscription is no 403 (a read): its content type, size and JSON are judged", async () => {
    const post = (init: { headers?: Record<string, string>; body: string }) =>
      t.request(RENDER, { method: "POST", key: t.keys.inactive, ...init });
    await expectError(await post({ headers: { "content-type": "text/plain" }, body: TWO_MIB }), 415);
    await expectError(
      await post({ headers: { "content-type": "application/json" }, body: `{${TWO_MIB}` }),
      413,
    );
    await expectError(await post({ headers: { "content-type": "application/json" }, body: "{nope" }), 400);
    // Then the prompt: the inactive tenant has none.
    await expectError(await post({ headers: { "content-type": "application/json" }, body: "{}" }), 404);
  });

  test("404 for an unknown version beats a bad body; then the body, then the inputs", async () => {
    const post = (path: string, json: unknown) => t.request(path, { method: "POST", key: t.keys.a, json });
    await expectError(await post("/api/v1/prompts/greet/9/render", { bogus: 1 }), 404, "has no version 9");
    await expectError(await post(RENDER, { inputs: {}, metadata: {} }), 400, "unknown field 'metadata'");
    await expectError(await post(RENDER, { inputs: {} }), 400, "missing required input: inputs.name");
    // Tenant B has no greet.
    const foreign = await t.request(RENDER, {
      method: "POST",
      key: t.keys.b,
      json: { inputs: { name: "x" } },
    });
    await expectError(foreign, 404, "prompt 'greet' not found");
  });

  test("200 with RateLimit headers from the render bucket; past its burst, 429 with Retry-After", async () => {
    const render = () =>
      t.request(RENDER, { method: "POST", key: t.keys.a, json: { inputs: { name: "Ada" } } });
    const first = await render();
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.headers.get("ratelimit-limit")).toBe("3");
    const body = (await first.json()) as { messages: unknown[]; memory: unknown };
    expect(body.memory).toEqual({ messages: 0, dropped: 0 });
    await render();
    await render();
    const limited = await render();
    await expectError(limited, 429, "prompts.render");
    expect(limited.headers.get("retry-after")).not.toBeNull();
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    // Runs are not charged for renders.
    const run = await t.request("/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      key: t.keys.a,
      json: { inputs: { name: "Ada" } },
    });
    expect(run.status).toBe(202);
  });

  test("GET on the render path is a 405 naming POST", async () => {
    const response = await t.request(RENDER, { key: t.keys.a });
    await expectError(response, 405);
    expect(response.headers.get("allow")).toBe("POST");
  });
});
