import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import { buildOpenApiDocument } from "../openapi/build-openapi-document.ts";
import { createComponentValidator } from "../openapi/component-validator.ts";

let t: TestApp;
let runId: string;
beforeAll(async () => {
  t = await createTestApp();
  const created = await t.request("/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    key: t.keys.a,
    json: { inputs: { name: "Grace" }, metadata: { source: "test" } },
  });
  runId = ((await created.json()) as { id: string }).id;
});
afterAll(async () => {
  await t.dispose();
});

const errorOf = async (response: Response) => ({
  status: response.status,
  body: (await response.json()) as { error: string; code: string },
});

/** Polls GET until the run leaves pending (the dev:echo engine answers within milliseconds). */
async function waitForEnd(id: string) {
  for (let attempt = 0; attempt < 500; attempt++) {
    const run = (await (await t.request(`/api/v1/promptruns/${id}`, { key: t.keys.a })).json()) as {
      status: string;
    };
    if (run.status !== "pending") return run;
    await Bun.sleep(10);
  }
  throw new Error("run still pending");
}

describe("GET /api/v1/promptruns/{id}", () => {
  test("200 with a PromptRun that validates against the OpenAPI document, pending and finished", async () => {
    const validator = createComponentValidator(buildOpenApiDocument());
    const response = await t.request(`/api/v1/promptruns/${runId}`, { key: t.keys.a });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const run = await response.json();
    expect(validator.validate("PromptRun", run)).toEqual([]);
    expect(run).toMatchObject({ id: runId, metadata: { source: "test" } });
    const finished = await waitForEnd(runId);
    expect(finished).toMatchObject({ status: "completed", output: "Hello Grace", error: null });
    expect(validator.validate("PromptRun", finished)).toEqual([]);
  });

  test("accepts an upper-case UUID for the same run", async () => {
    const response = await t.request(`/api/v1/promptruns/${runId.toUpperCase()}`, { key: t.keys.a });
    expect(response.status).toBe(200);
  });

  test("tenant isolation: another tenant's run is a 404, exactly like an unknown id", async () => {
    const other = await errorOf(await t.request(`/api/v1/promptruns/${runId}`, { key: t.keys.b }));
    const unknown = await errorOf(
      await t.request(`/api/v1/promptruns/${crypto.randomUUID()}`, { key: t.keys.b }),
    );
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(other.body.code).toBe(unknown.body.code);
    expect(other.body.error).not.toContain(t.tenants.a);
  });

  test("a malformed id is a 404 before authentication", async () => {
    for (const id of ["not-a-uuid", "123", "%E0%A4%A", "..%2F..%2Fetc", `${crypto.randomUUID()}x`]) {
      const { status, body } = await errorOf(await t.request(`/api/v1/promptruns/${id}`));
      expect(status).toBe(404);
      expect(body.error).toBe("prompt run not found");
    }
  });

  test("401 without a key or with an invalid one", async () => {
    expect((await errorOf(await t.request(`/api/v1/promptruns/${runId}`))).status).toBe(401);
    expect(
      (await errorOf(await t.request(`/api/v1/promptruns/${runId}`, { key: "pr_live_bogus" }))).status,
    ).toBe(401);
  });

  test("reading stays allowed without an active subscription", async () => {
    await t.services.tenants.setSubscription(t.tenants.a, false);
    try {
      expect((await t.request(`/api/v1/promptruns/${runId}`, { key: t.keys.a })).status).toBe(200);
      const create = await t.request("/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        key: t.keys.a,
        json: { inputs: { name: "x" } },
      });
      expect(create.status).toBe(403);
    } finally {
      await t.services.tenants.setSubscription(t.tenants.a, true);
    }
  });
});
