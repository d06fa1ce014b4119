import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../http/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.dispose();
});

async function createSlowRun(): Promise<string> {
  const response = await t.request("/api/v1/prompts/slow/latest/runs", {
    method: "POST",
    key: t.keys.a,
    json: { inputs: {} },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

describe("POST /api/v1/promptruns/{id}/cancel", () => {
  test("200 with the failed, cancelled run; a second cancel is a 409", async () => {
    const id = await createSlowRun();
    const cancelled = await t.request(`/api/v1/promptruns/${id}/cancel`, { method: "POST", key: t.keys.a });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ id, status: "failed", error: "cancelled", output: null });
    const again = await t.request(`/api/v1/promptruns/${id}/cancel`, { method: "POST", key: t.keys.a });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: expect.any(String), code: "conflict" });
  });

  test("any or no body is accepted (the body is not read)", async () => {
    const id = await createSlowRun();
    const response = await t.request(`/api/v1/promptruns/${id}/cancel`, {
      method: "POST",
      key: t.keys.a,
      headers: { "content-type": "text/plain" },
      body: "x".repeat(2 * 1024 * 1024),
    });
    expect(response.status).toBe(200);
  });

  test("404 for another tenant's run, an unknown id and a malformed id (before auth); 401 without key", async () => {
    const id = await createSlowRun();
    expect(
      (await t.request(`/api/v1/promptruns/${id}/cancel`, { method: "POST", key: t.keys.b })).status,
    ).toBe(404);
    expect(
      (await t.request(`/api/v1/promptruns/${crypto.randomUUID()}/cancel`, { method: "POST", key: t.keys.a }))
        .status,
    ).toBe(404);
    expect((await t.request("/api/v1/promptruns/nope/cancel", { method: "POST" })).status).toBe(404);
    expect((await t.request(`/api/v1/promptruns/${id}/cancel`, { method: "POST" })).status).toBe(401);
    // Tenant B's attempt left the run alone.
    const run = (await (await t.request(`/api/v1/promptruns/${id}`, { key: t.keys.a })).json()) as {
      status: string;
    };
    expect(run.status).toBe("pending");
  });
});
