import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";
import { type FakePromptrunServer, startFakePromptrunServer } from "./testing/fake-promptrun-server.ts";

let server: FakePromptrunServer;

beforeAll(() => {
  server = startFakePromptrunServer({
    script: (request) =>
      request.slug === "slow"
        ? { tokens: ["a", "b", "c"], tokenDelayMs: 200 }
        : request.slug === "broken"
          ? { tokens: [], fail: "provider said no" }
          : { tokens: ["Hello", " there"] },
  });
});
afterAll(() => server.stop());

const client = () => createPromptrunClient({ baseUrl: `${server.url}/`, apiKey: server.apiKey });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (ApiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("runs", () => {
  test("create, then wait until completed", async () => {
    const created = await client().runs.create("greet", "latest", { inputs: { name: "Ada" }, channel: "c1" });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    const run = await client().runs.wait(created.id, { intervalMs: 20 });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("Hello there");
    expect(run.thread).toBe(created.thread);
    expect(run.channel).toBe("c1");
    expect(run.tokenUsage?.output).toBe(2);
    expect(run.cost?.total).toBeGreaterThan(0);
  });

  test("a failed run is returned by wait, not thrown", async () => {
    const created = await client().runs.create("broken", 1, { inputs: {} });
    const run = await client().runs.wait(created.id, { intervalMs: 20 });
    expect(run.status).toBe("failed");
    expect(run.error).toBe("provider said no");
    expect(run.output).toBeNull();
  });

  test("sends the idempotency key and keeps the body as given", async () => {
    const thread = crypto.randomUUID();
    await client().runs.create(
      "greet",
      "production",
      { inputs: { a: 1 }, thread },
      { idempotencyKey: "k-1" },
    );
    const last = server.createdRuns.at(-1);
    expect(last?.idempotencyKey).toBe("k-1");
    expect(last?.version).toBe("production");
    expect(last?.body.thread).toBe(thread);
  });

  test("wait gives up with a timeout error while the run is still pending", async () => {
    const created = await client().runs.create("slow", "latest", { inputs: {} });
    const error = await rejection(client().runs.wait(created.id, { intervalMs: 20, timeoutMs: 60 }));
    expect(error.code).toBe("timeout");
  });

  test("cancel ends a pending run; cancelling again is a conflict", async () => {
    const created = await client().runs.create("slow", "latest", { inputs: {} });
    const cancelled = await client().runs.cancel(created.id);
    expect(cancelled.status).toBe("failed");
    expect(cancelled.error).toBe("cancelled");
    const error = await rejection(client().runs.cancel(created.id));
    expect(error.status).toBe(409);
    expect(error.code).toBe("conflict");
  });

  test("server errors become ApiError values with status and code", async () => {
    const wrongKey = createPromptrunClient({ baseUrl: server.url, apiKey: "pr_wrong" });
    const unauthorized = await rejection(wrongKey.runs.get(crypto.randomUUID()));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.code).toBe("unauthorized");
    const missing = await rejection(client().runs.get(crypto.randomUUID()));
    expect(missing.code).toBe("not_found");
    const invalid = await rejection(
      client().runs.create("greet", "latest", { inputs: {}, priority: "urgent" as "low" }),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.isRetryable).toBe(false);
  });

  test("a response that breaks the contract is an invalid_response error", async () => {
    const lying = createPromptrunClient({
      baseUrl: "http://promptrun.invalid",
      fetch: async () => Response.json({ id: "not-a-uuid", status: "done" }),
    });
    const error = await rejection(lying.runs.get(crypto.randomUUID()));
    expect(error.code).toBe("invalid_response");
    expect(error.message).toContain("does not match the contract");
  });

  test("an unreachable server is a retryable network error", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${closed.port}`;
    await closed.stop(true);
    const error = await rejection(createPromptrunClient({ baseUrl: url }).runs.get(crypto.randomUUID()));
    expect(error.code).toBe("network");
    expect(error.status).toBe(0);
    expect(error.isRetryable).toBe(true);
  });
});

describe("threads", () => {
  test("createStreamToken returns a token for the thread's stream URL", async () => {
    const thread = crypto.randomUUID();
    const token = await client().threads.createStreamToken(thread);
    expect(token.url).toBe(`${server.url}/stream/${thread}`);
    expect(Date.parse(token.expiresAt)).toBeGreaterThan(Date.now());
  });

  test("subscribe mints its own token and delivers the run's events", async () => {
    const thread = crypto.randomUUID();
    const controller = new AbortController();
    const types: string[] = [];
    for await (const event of client().threads.subscribe(thread, { signal: controller.signal })) {
      types.push(event.type);
      if (event.type === "ready") await client().runs.create("greet", "latest", { inputs: {}, thread });
      if (event.type === "run.completed") controller.abort();
    }
    expect(types).toEqual(["ready", "run.started", "run.token", "run.token", "run.completed"]);
  });
});
