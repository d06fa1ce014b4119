import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";
import { RunOutputError, runOutputJson } from "./run-output-json.ts";
import { type FakePromptrunServer, startFakePromptrunServer } from "./testing/fake-promptrun-server.ts";

let server: FakePromptrunServer;
const contactText = '{"name":"Ada","email":"ada@example.com","topics":["engines"]}';

beforeAll(() => {
  server = startFakePromptrunServer({
    script: (request) =>
      request.slug === "slow"
        ? { tokens: ["a", "b", "c"], tokenDelayMs: 200 }
        : request.slug === "contact"
          ? { tokens: [contactText], outputJson: JSON.parse(contactText) }
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

describe("structured output", () => {
  const Contact = z.object({ name: z.string(), email: z.string(), topics: z.array(z.string()) });
  type Contact = z.infer<typeof Contact>;

  test("wait<T> types outputJson; runOutputJson checks it with a zod schema or a function", async () => {
    const { id } = await client().runs.create("contact", "latest", { inputs: {} });
    const run = await client().runs.wait<Contact>(id, { intervalMs: 20 });
    expect(run).toMatchObject({ status: "completed", finishReason: "stop", phase: null });
    expect(run.memory).toEqual({ messages: 0, dropped: 0 });
    expect(run.outputJson?.topics).toEqual(["engines"]);
    const contact: Contact = runOutputJson(run, Contact);
    expect(contact).toEqual({ name: "Ada", email: "ada@example.com", topics: ["engines"] });
    expect(runOutputJson<Contact>(run).name).toBe("Ada");
    expect(runOutputJson(run, (value) => (value as Contact).email)).toBe("ada@example.com");
    // A schema the output does not match throws the schema's own error.
    expect(() => runOutputJson(run, z.object({ name: z.number() }))).toThrow(z.ZodError);
  });

  test("runOutputJson throws a RunOutputError for a pending, failed or text run", async () => {
    const slow = await client().runs.create("slow", "latest", { inputs: {} });
    const pending = await client().runs.get(slow.id);
    expect(() => runOutputJson(pending)).toThrow(
      new RunOutputError("pending", `run ${slow.id} is still pending`),
    );
    const broken = await client().runs.wait((await client().runs.create("broken", 1, { inputs: {} })).id, {
      intervalMs: 20,
    });
    expect(() => runOutputJson(broken)).toThrow(`run ${broken.id} failed: provider said no`);
    const text = await client().runs.wait((await client().runs.create("greet", 1, { inputs: {} })).id, {
      intervalMs: 20,
    });
    expect(text.outputJson).toBeNull();
    let caught: unknown;
    try {
      runOutputJson(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RunOutputError);
    expect((caught as RunOutputError).status).toBe("completed");
    expect((caught as RunOutputError).message).toContain("has no JSON output");
  });
});

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
    expect(types).toEqual(["ready", "run.step", "run.started", "run.token", "run.token", "run.completed"]);
  });
});
