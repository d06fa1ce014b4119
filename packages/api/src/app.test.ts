import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "./http/test-app.ts";
import { createMetricsRegistry } from "./metrics/metrics-registry.ts";
import { buildOpenApiDocument } from "./openapi/build-openapi-document.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.dispose();
});

describe("routing", () => {
  test("unknown routes are 404 with an error body", async () => {
    for (const path of ["/", "/api/v1", "/api/v1/promptrun", "/api/v2/promptruns/x", "/health/", "/docsx"]) {
      const response = await t.request(path);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: "route not found", code: "not_found" });
    }
  });

  test("a wrong method is a 405 with Allow and an error body", async () => {
    const cases: Array<[string, string, string]> = [
      ["DELETE", `/api/v1/promptruns/${crypto.randomUUID()}`, "GET, HEAD"],
      ["GET", "/api/v1/prompts/greet/latest/runs", "POST"],
      ["PUT", "/api/v1/promptruns/x/cancel", "POST"],
      ["POST", "/health", "GET, HEAD"],
      ["POST", "/api/v1/openapi.json", "GET, HEAD"],
      ["POST", `/stream/${crypto.randomUUID()}`, "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const response = await t.request(path, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
      expect(await response.json()).toMatchObject({
        error: expect.stringContaining(method),
        code: "method_not_allowed",
      });
    }
  });

  test("HEAD answers like GET without a body", async () => {
    const response = await t.request("/health", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(await response.text()).toBe("");
  });

  test("x-request-id: a sane incoming id is echoed, otherwise one is generated", async () => {
    const echoed = await t.request("/health", { headers: { "x-request-id": "req-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("req-123");
    const generated = await t.request("/nope", { headers: { "x-request-id": "bad id\twith tab" } });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const errorResponse = await t.request("/api/v1/promptruns/x");
    expect(errorResponse.headers.get("x-request-id")).not.toBeNull();
  });

  test("/trpc/* goes to the tRPC handler and /stream/:thread to the SSE handler", async () => {
    const trpc = await t.request("/trpc/no.such.procedure");
    expect(trpc.status).toBe(404);
    expect(JSON.stringify(await trpc.json())).not.toContain("route not found");
    const streamMalformed = await t.request("/stream/not-a-uuid");
    expect(streamMalformed.status).toBe(404);
    const streamNoToken = await t.request(`/stream/${crypto.randomUUID()}`);
    expect(streamNoToken.status).toBe(401);
    expect(await streamNoToken.json()).toMatchObject({ error: expect.any(String) });
  });
});

describe("unexpected errors", () => {
  let failing: TestApp;
  beforeAll(async () => {
    failing = await createTestApp({
      wrapServices: (services) => ({
        ...services,
        runs: {
          ...services.runs,
          get: async () => {
            throw new Error("database exploded at /var/lib/secret.db");
          },
        },
      }),
    });
  });
  afterAll(async () => {
    await failing.dispose();
  });

  test("500 with a generic body, never the message or a stack; logged with the request id", async () => {
    const response = await failing.request(`/api/v1/promptruns/${crypto.randomUUID()}`, {
      key: failing.keys.a,
      headers: { "x-request-id": "trace-500" },
    });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: "internal server error", code: "internal" });
    expect(text).not.toContain("exploded");
    const logged = failing.logs.find((entry) => entry.level === "error");
    expect(logged?.object).toMatchObject({
      requestId: "trace-500",
      path: expect.stringContaining("/promptruns/"),
    });
    expect(JSON.stringify(logged?.object)).toContain("database exploded");
  });
});

describe("/health", () => {
  test("200 {status: ok} without a health probe", async () => {
    const response = await t.request("/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  test("details when ok; 503 with an error body when not ok or when the probe throws", async () => {
    let state: "ok" | "down" | "throws" = "ok";
    const probed = await createTestApp({
      deps: {
        health: async () => {
          if (state === "throws") throw new Error("probe failed");
          return { ok: state === "ok", details: { database: state === "ok" ? "ok" : "unreachable" } };
        },
      },
    });
    try {
      const ok = await probed.request("/health");
      expect([ok.status, await ok.json()]).toEqual([200, { status: "ok", database: "ok" }]);
      state = "down";
      const down = await probed.request("/health");
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({
        status: "unavailable",
        database: "unreachable",
        error: expect.any(String),
      });
      state = "throws";
      const threw = await probed.request("/health");
      expect(threw.status).toBe(503);
      expect(await threw.json()).toMatchObject({ error: "health check failed" });
    } finally {
      await probed.dispose();
    }
  });
});

describe("/metrics", () => {
  test("Prometheus text with request counts and latencies by route template and status, plus metricsText", async () => {
    const metrics = createMetricsRegistry();
    const observed = await createTestApp({
      deps: { metrics, metricsText: () => "# HELP db_up x\ndb_up 1\n" },
    });
    try {
      await observed.request(`/api/v1/promptruns/${crypto.randomUUID()}`, { key: observed.keys.a });
      await observed.request(`/api/v1/promptruns/${crypto.randomUUID()}`, { key: observed.keys.a });
      await observed.request("/no/such/route");
      const response = await observed.request("/metrics");
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
      const text = await response.text();
      expect(text).toContain(
        'promptrun_http_requests_total{method="GET",route="/api/v1/promptruns/:id",status="404"} 2',
      );
      expect(text).toContain('promptrun_http_requests_total{method="GET",route="unmatched",status="404"} 1');
      expect(text).toContain(
        'promptrun_http_request_duration_seconds_count{method="GET",route="/api/v1/promptruns/:id",status="404"} 2',
      );
      expect(text).toContain("promptrun_sse_open_streams 0");
      expect(text).toEndWith("db_up 1\n");
      // The raw ids never become label values.
      expect(text).not.toMatch(/promptruns\/[0-9a-f]{8}-/);
    } finally {
      await observed.dispose();
    }
  });
});

describe("OpenAPI and docs", () => {
  test("GET /api/v1/openapi.json is the generated document, with the public URL as server", async () => {
    const response = await t.request("/api/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const document = (await response.json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(document).toEqual(
      JSON.parse(JSON.stringify(buildOpenApiDocument({ serverUrl: t.deps.config.publicUrl }))),
    );
    expect(document.paths["/api/v1/promptruns/{id}"]?.get?.operationId).toBe("get_prompt_run");
  });

  test("GET /docs is an HTML page loading the local Scalar bundle, pointed at the document", async () => {
    const page = await t.request("/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain('<script src="/docs/scalar.js"></script>');
    expect(html).toContain('"url":"/api/v1/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await t.request("/docs/scalar.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toStartWith("text/javascript");
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });
});
