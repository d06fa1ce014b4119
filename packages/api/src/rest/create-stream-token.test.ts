import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import { buildOpenApiDocument } from "../openapi/build-openapi-document.ts";
import { createComponentValidator } from "../openapi/component-validator.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ engine: { streamUrl: "https://stream.example" } });
});
afterAll(async () => {
  await t.dispose();
});

const path = (thread: string) => `/api/v1/threads/${thread}/stream-token`;

describe("POST /api/v1/threads/{thread}/stream-token", () => {
  test("200 StreamTokenResponse for a thread that does not exist yet; the body is never read", async () => {
    const thread = crypto.randomUUID();
    const response = await t.request(path(thread), {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: "ignored",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("ratelimit-limit")).not.toBeNull();
    const body = (await response.json()) as { token: string; expiresAt: string; url: string };
    expect(createComponentValidator(buildOpenApiDocument()).validate("StreamTokenResponse", body)).toEqual(
      [],
    );
    expect(body.url).toBe(`https://stream.example/stream/${thread}`);
    expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now());
    await expect(t.services.streamTokens.verify(body.token, thread)).resolves.toMatchObject({
      tenantId: t.tenants.a,
    });
  });

  test("precedence: malformed thread (404) → key (401) → subscription (403)", async () => {
    const malformed = await t.request(path("not-a-uuid"), { method: "POST" });
    expect(malformed.status).toBe(404);
    expect(await malformed.json()).toMatchObject({ error: expect.stringContaining("thread") });
    const thread = crypto.randomUUID();
    expect((await t.request(path(thread), { method: "POST", key: "pr_live_bogus" })).status).toBe(401);
    expect((await t.request(path(thread), { method: "POST" })).status).toBe(401);
    const inactive = await t.request(path(thread), { method: "POST", key: t.keys.inactive });
    expect(inactive.status).toBe(403);
    expect(await inactive.json()).toMatchObject({ error: "no active subscription", code: "forbidden" });
  });

  test("GET is a 405 with Allow: POST", async () => {
    const response = await t.request(path(crypto.randomUUID()), { key: t.keys.a });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });
});

describe("stream-token rate limiting", () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ engine: { rateLimit: { perSecond: 0.001, burst: 1 } } });
  });
  afterAll(async () => {
    await limited.dispose();
  });

  test("429 with Retry-After and RateLimit-* headers", async () => {
    const send = () => limited.request(path(crypto.randomUUID()), { method: "POST", key: limited.keys.a });
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: expect.any(String), code: "rate_limited" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("ratelimit-limit")).toBe("1");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
  });
});
