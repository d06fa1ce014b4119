import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import { pauseRun } from "../http/test-paused-run.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ recordRuns: true });
});
afterAll(async () => {
  await t.dispose();
});

const answers = {
  toolOutputs: [
    { toolCallId: "call_order", output: { status: "shipped" } },
    { toolCallId: "call_time", output: "12:00" },
  ],
};

/** A run of tenant A, paused for the two calls of pausedToolCalls. */
async function pausedRun(): Promise<{ id: string; thread: string; expiresAt: Date }> {
  const response = await t.request("/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    key: t.keys.a,
    json: { inputs: { name: "Ada" } },
  });
  expect(response.status).toBe(202);
  const created = (await response.json()) as { id: string; thread: string };
  const { expiresAt } = await pauseRun(t.store, t.tenants.a, created.id, t.clock.now());
  return { ...created, expiresAt };
}

const submit = (id: string, init: Parameters<TestApp["request"]>[1] = {}) =>
  t.request(`/api/v1/promptruns/${id}/tool-outputs`, {
    method: "POST",
    key: t.keys.a,
    json: answers,
    ...init,
  });

const errorOf = async (response: Response) => ({
  status: response.status,
  ...((await response.json()) as { error: string; code: string }),
});

describe("POST /api/v1/promptruns/{id}/tool-outputs", () => {
  test("202 {id, thread} with Location; the pause ends with the outputs in the paused step", async () => {
    const { id, thread } = await pausedRun();
    const response = await submit(id);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ id, thread });
    expect(response.headers.get("location")).toBe(`/api/v1/promptruns/${id}`);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("idempotent-replayed")).toBeNull();
    const stored = await t.store.runs.get(t.tenants.a, id);
    expect(stored?.pause).toBeNull();
    expect(
      stored?.steps[0]?.toolResults.map((result) => [result.toolCallId, result.output, result.executedBy]),
    ).toEqual([
      ["call_order", { status: "shipped" }, "client"],
      ["call_time", "12:00", "client"],
    ]);
    // A second answer finds the run no longer waiting.
    expect(await errorOf(await submit(id))).toEqual({
      status: 409,
      code: "conflict",
      error: "run is pending (phase running), not waiting for tool outputs",
    });
  });

  test("Idempotency-Key: a retry replays the 202; the key with another body is a 409", async () => {
    const { id, thread } = await pausedRun();
    const headers = { "idempotency-key": "submit-1" };
    expect((await submit(id, { headers })).status).toBe(202);
    const replay = await submit(id, { headers });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toEqual({ id, thread });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const other = await submit(id, {
      headers,
      json: {
        toolOutputs: [
          { toolCallId: "call_order", output: 1 },
          { toolCallId: "call_time", output: 2 },
        ],
      },
    });
    expect(await errorOf(other)).toEqual({
      status: 409,
      code: "conflict",
      error: "Idempotency-Key reused with a different request",
    });
    expect(await errorOf(await submit(id, { headers: { "idempotency-key": "" } }))).toMatchObject({
      status: 400,
      code: "invalid",
    });
  });

  test("400s name what is wrong: unknown, repeated and missing ids, an output over 256 KB", async () => {
    const { id } = await pausedRun();
    const cases: Array<[unknown, string]> = [
      [
        { toolOutputs: [...answers.toolOutputs, { toolCallId: "call_other", output: 1 }] },
        "toolOutputs[2].toolCallId: 'call_other' is not a tool call the run waits for",
      ],
      [
        { toolOutputs: [...answers.toolOutputs, { toolCallId: "call_time", output: 1 }] },
        "toolOutputs[2].toolCallId: 'call_time' is repeated",
      ],
      [{ toolOutputs: [answers.toolOutputs[1]] }, "toolOutputs: no output for 'call_order' (lookup_order)"],
      [
        {
          toolOutputs: [{ toolCallId: "call_order", output: "x".repeat(300 * 1024) }, answers.toolOutputs[1]],
        },
        "toolOutputs[0].output: 307200 bytes; at most 262144 bytes are allowed (UTF-8, its JSON when not a string)",
      ],
      [{ toolOutputs: [] }, "toolOutputs: Too small: expected array to have >=1 items"],
      [{ outputs: [] }, "toolOutputs: required; unknown field 'outputs'"],
      [[1], "request body must be a JSON object"],
    ];
    for (const [json, error] of cases) {
      expect(await errorOf(await submit(id, { json }))).toEqual({ status: 400, code: "invalid", error });
    }
    // None of them touched the pause.
    expect((await t.store.runs.get(t.tenants.a, id))?.pause?.step).toBe(0);
  });

  test("409 for a run that is not waiting (queued, or ended), and for an expired pause", async () => {
    const created = await t.request("/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      key: t.keys.a,
      json: { inputs: { name: "Q" } },
    });
    const { id: queued } = (await created.json()) as { id: string };
    expect(await errorOf(await submit(queued))).toEqual({
      status: 409,
      code: "conflict",
      error: "run is pending (phase queued), not waiting for tool outputs",
    });
    const cancelled = await pausedRun();
    expect(
      (await t.request(`/api/v1/promptruns/${cancelled.id}/cancel`, { method: "POST", key: t.keys.a }))
        .status,
    ).toBe(200);
    expect((await errorOf(await submit(cancelled.id))).error).toBe(
      "run is failed, not waiting for tool outputs",
    );
    const expiring = await pausedRun();
    t.clock.advance?.(600_000);
    expect(await errorOf(await submit(expiring.id))).toEqual({
      status: 409,
      code: "conflict",
      error: `tool outputs were not submitted before ${expiring.expiresAt.toISOString()}`,
    });
  });

  test("error order: malformed id 404, key 401, subscription 403, content type 415, size 413, JSON 400, run 404", async () => {
    const { id } = await pausedRun();
    expect(
      (await errorOf(await t.request("/api/v1/promptruns/nope/tool-outputs", { method: "POST" }))).status,
    ).toBe(404);
    const anonymous = await t.request(`/api/v1/promptruns/${id}/tool-outputs`, {
      method: "POST",
      json: answers,
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe("Bearer");
    expect((await errorOf(await submit(id, { key: t.keys.inactive }))).status).toBe(403);
    const text = await submit(id, { headers: { "content-type": "text/plain" }, json: undefined, body: "{}" });
    expect(await errorOf(text)).toMatchObject({ status: 415, code: "unsupported_media_type" });
    const huge = await submit(id, {
      json: { toolOutputs: [{ toolCallId: "call_order", output: "x".repeat(1_100_000) }] },
    });
    expect(await errorOf(huge)).toMatchObject({ status: 413, code: "payload_too_large" });
    const notJson = await submit(id, {
      headers: { "content-type": "application/json" },
      json: undefined,
      body: "{",
    });
    expect(await errorOf(notJson)).toMatchObject({ status: 400, code: "invalid" });
    // Another tenant's run reads as unknown (never 403), whatever the body.
    expect(await errorOf(await submit(id, { key: t.keys.b, json: { bogus: true } }))).toEqual({
      status: 404,
      code: "not_found",
      error: `run '${id}' not found`,
    });
    expect((await errorOf(await submit(crypto.randomUUID()))).status).toBe(404);
    // And tenant B's attempts left the pause alone.
    expect((await t.store.runs.get(t.tenants.a, id))?.pause?.step).toBe(0);
    expect((await t.request(`/api/v1/promptruns/${id}/tool-outputs`, { key: t.keys.a })).status).toBe(405);
  });

  test("a stream token (what a browser holds) is refused with 401, even for its own thread's run", async () => {
    const { id, thread } = await pausedRun();
    const minted = await t.request(`/api/v1/threads/${thread}/stream-token`, {
      method: "POST",
      key: t.keys.a,
    });
    expect(minted.status).toBe(200);
    const { token } = (await minted.json()) as { token: string };
    const response = await submit(id, { key: token });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    expect(((await response.json()) as { code: string }).code).toBe("unauthorized");
    const viaQuery = await t.request(`/api/v1/promptruns/${id}/tool-outputs?token=${token}`, {
      method: "POST",
      json: answers,
    });
    expect(viaQuery.status).toBe(401);
    expect((await t.store.runs.get(t.tenants.a, id))?.pause?.step).toBe(0);
  });
});
