/**
 * GET /api/v1/promptruns/{id}/messages over the real services and engine (dev:echo, memory store):
 * the answer validates against the OpenAPI document, the history is the run's own, and the errors
 * are get-run's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runMessagesSchema } from "@promptrun/contract";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import { buildOpenApiDocument } from "../openapi/build-openapi-document.ts";
import { createComponentValidator } from "../openapi/component-validator.ts";

let t: TestApp;
const validator = createComponentValidator(buildOpenApiDocument());

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.dispose();
});

const createRun = async (body: Record<string, unknown>, slug = "greet") => {
  const response = await t.request(`/api/v1/prompts/${slug}/latest/runs`, {
    method: "POST",
    key: t.keys.a,
    json: body,
  });
  expect(response.status).toBe(202);
  return (await response.json()) as { id: string; thread: string };
};

/** Polls GET until the run leaves pending (dev:echo answers within milliseconds). */
async function waitForEnd(id: string): Promise<{ status: string }> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const run = (await (await t.request(`/api/v1/promptruns/${id}`, { key: t.keys.a })).json()) as {
      status: string;
    };
    if (run.status !== "pending") return run;
    await Bun.sleep(10);
  }
  throw new Error("run still pending");
}

const messagesOf = async (id: string, key = t.keys.a) => {
  const response = await t.request(`/api/v1/promptruns/${id}/messages`, { key });
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body, headers: response.headers };
};

describe("GET /api/v1/promptruns/{id}/messages", () => {
  test("two runs on a thread: the second carried the first exchange; both answers are documented", async () => {
    const first = await createRun({ inputs: { name: "Ada" } });
    expect((await waitForEnd(first.id)).status).toBe("completed");
    const second = await createRun({ inputs: { name: "Grace" }, thread: first.thread });
    expect((await waitForEnd(second.id)).status).toBe("completed");

    const answer = await messagesOf(second.id);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toStartWith("application/json");
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(validator.validate("RunMessages", answer.body)).toEqual([]);
    expect(answer.body).toEqual({
      messages: [
        { role: "user", content: "Hello Ada" },
        { role: "assistant", content: "Hello Ada" },
        { role: "user", content: "Hello Grace" },
      ],
      memory: { messages: 2, dropped: 0 },
    });
    expect((await messagesOf(first.id)).body).toEqual({
      messages: [{ role: "user", content: "Hello Ada" }],
      memory: { messages: 0, dropped: 0 },
    });
    // The same as the typed answer of the client's schema.
    const parsed: unknown = runMessagesSchema.parse(answer.body);
    expect(parsed).toEqual(answer.body);
  });

  test("a pending run answers with the history it would carry now and memory null", async () => {
    const first = await createRun({ inputs: { name: "Ada" } });
    await waitForEnd(first.id);
    const slow = await createRun({ inputs: {}, thread: first.thread }, "slow");
    const answer = await messagesOf(slow.id);
    expect(answer.status).toBe(200);
    expect(validator.validate("RunMessages", answer.body)).toEqual([]);
    expect(answer.body).toEqual({
      messages: [
        { role: "user", content: "Hello Ada" },
        { role: "assistant", content: "Hello Ada" },
        { role: "user", content: "one two three" },
      ],
      memory: null,
    });
    await t.request(`/api/v1/promptruns/${slow.id}/cancel`, { method: "POST", key: t.keys.a });
  });

  test("another tenant's run is the 404 of an unknown id; a malformed id is a 404 before the key", async () => {
    const run = await createRun({ inputs: { name: "Ada" } });
    const other = await messagesOf(run.id, t.keys.b);
    const unknown = await messagesOf(crypto.randomUUID(), t.keys.b);
    expect([other.status, unknown.status]).toEqual([404, 404]);
    expect(other.body.code).toBe(unknown.body.code);
    expect(validator.validate("ErrorResponse", other.body)).toEqual([]);
    for (const id of ["not-a-uuid", "..%2F..%2Fetc", `${run.id}x`]) {
      const response = await t.request(`/api/v1/promptruns/${id}/messages`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toBe("prompt run not found");
    }
    expect((await messagesOf(run.id.toUpperCase())).status).toBe(200);
  });

  test("401 without a key or with a bad one; 405 with Allow for another method", async () => {
    const run = await createRun({ inputs: { name: "Ada" } });
    expect((await t.request(`/api/v1/promptruns/${run.id}/messages`)).status).toBe(401);
    expect((await messagesOf(run.id, "pr_live_bogus")).status).toBe(401);
    const post = await t.request(`/api/v1/promptruns/${run.id}/messages`, { method: "POST", key: t.keys.a });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  test("the documented example validates", () => {
    const document = JSON.parse(JSON.stringify(buildOpenApiDocument()));
    const content = document.paths["/api/v1/promptruns/{id}/messages"].get.responses["200"].content;
    const example = content["application/json"].examples.greet.value;
    expect(validator.validate("RunMessages", example)).toEqual([]);
    expect(validator.validate("RunMessages", { ...example, memory: { messages: -1 } })).not.toEqual([]);
  });

  test("reading stays allowed without an active subscription", async () => {
    const run = await createRun({ inputs: { name: "Ada" } });
    await t.services.tenants.setSubscription(t.tenants.a, false);
    try {
      expect((await messagesOf(run.id)).status).toBe(200);
    } finally {
      await t.services.tenants.setSubscription(t.tenants.a, true);
    }
  });
});
