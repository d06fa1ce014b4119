/**
 * Structured output end to end, through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres): a prompt with `output.format: json_schema` on the keyless
 * development model returns JSON that matches its schema, and every surface carries the run
 * fields of docs/PRODUCT-RULES.md "Runs" (outputJson, finishReason, phase, memory): REST (checked
 * against the OpenAPI document), the SSE `run.completed` event, a webhook delivery and tRPC.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import { Webhook } from "standardwebhooks";
import { echoPrompt, pushPrompts } from "./hardening/support.ts";
import {
  componentValidator,
  fetchOpenApiDocument,
  type OpenApiDocumentJson,
  responseValidator,
} from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import { SseConnection } from "./support/sse.ts";

const contactSchema = {
  type: "object",
  properties: {
    name: { type: "string" },
    email: { type: "string" },
    topics: { type: "array", items: { type: "string" } },
  },
  required: ["name", "email", "topics"],
  additionalProperties: false,
};

const contactPrompt = {
  slug: "contact-json",
  model: "dev:echo",
  inputs: { text: { type: "string" } },
  messages: [
    { role: "system", content: "Extract the contact from the user's text." },
    { role: "user", content: "{{text}}" },
  ],
  output: { format: "json_schema", name: "contact", strict: true, schema: contactSchema },
};

type Run = Record<string, unknown>;

let server: TestServer;
let document: OpenApiDocumentJson;
const validateContact = new Ajv2020({ strict: false, allErrors: true }).compile(contactSchema);

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.2,0.2" } });
  await pushPrompts(server, server.tenantId, [
    contactPrompt,
    echoPrompt("slow-echo", 150),
    echoPrompt("plain-echo"),
  ]);
  document = await fetchOpenApiDocument(server.url);
});
afterAll(async () => {
  await server?.dispose();
});

const expectValid = (validate: ReturnType<typeof responseValidator>, value: unknown) => {
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
};
const validateGetRun = () => responseValidator(document, "/api/v1/promptruns/{id}", "get", "200");

async function createRun(
  slug: string,
  body: Record<string, unknown>,
): Promise<{ id: string; thread: string }> {
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  expect(response.status).toBe(202);
  const created = (await response.json()) as { id: string; thread: string };
  expect(response.headers.get("location")).toBe(`/api/v1/promptruns/${created.id}`);
  expectValid(responseValidator(document, "/api/v1/prompts/{slug}/{version}/runs", "post", "202"), created);
  return created;
}

async function getRun(id: string): Promise<Run> {
  const response = await api(server, `/api/v1/promptruns/${id}`);
  expect(response.status).toBe(200);
  const run = (await response.json()) as Run;
  expectValid(validateGetRun(), run);
  return run;
}

async function waitForPhase(id: string, phase: string, timeoutMs = 10_000): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(id);
    if (run.phase === phase) return run;
    if (Date.now() > deadline)
      throw new Error(`run ${id} never reached phase ${phase}: ${JSON.stringify(run)}`);
    await Bun.sleep(20);
  }
}

/** A completed run of a JSON prompt: outputJson matches the schema and is the parsed output. */
function expectJsonRun(run: Run, memory: { messages: number; dropped: number }) {
  expect(run.status, JSON.stringify(run)).toBe("completed");
  expect(validateContact(run.outputJson), JSON.stringify(validateContact.errors)).toBe(true);
  expect(JSON.parse(String(run.output))).toEqual(run.outputJson);
  expect(run.finishReason).toBe("stop");
  expect(run.phase).toBeNull();
  expect(run.memory).toEqual(memory);
  expectValid(validateGetRun(), run);
}

describe("structured output", () => {
  test("REST: 202, queued behind a running run, then completed with outputJson, finishReason, phase and memory", async () => {
    const thread = crypto.randomUUID();
    const words = Array.from({ length: 12 }, (_, index) => `word${index}`).join(" ");
    const slow = await createRun("slow-echo", { inputs: { text: words }, thread });
    const running = await waitForPhase(slow.id, "running");
    expect(running).toMatchObject({ status: "pending", outputJson: null, finishReason: null });
    expect(running.startedAt).not.toBeNull();

    // Same (thread, channel): it waits behind the slow run, so it is still queued.
    const queuedRun = await createRun("contact-json", {
      inputs: { text: "Ada Lovelace, ada@example.com, likes engines and poetry." },
      thread,
    });
    const queued = await getRun(queuedRun.id);
    expect(queued).toMatchObject({
      status: "pending",
      phase: "queued",
      startedAt: null,
      output: null,
      outputJson: null,
      finishReason: null,
    });

    const slowDone = await waitForRun(server, slow.id);
    expect(slowDone).toMatchObject({ status: "completed", output: words, outputJson: null, phase: null });
    expect(slowDone.finishReason).toBe("stop");
    expect(slowDone.memory).toEqual({ messages: 0, dropped: 0 });

    await waitForRun(server, queuedRun.id);
    // It carried the slow run's exchange (its user message and its answer).
    expectJsonRun(await getRun(queuedRun.id), { messages: 2, dropped: 0 });
  });

  test("a text prompt's run has outputJson null", async () => {
    const { id } = await createRun("plain-echo", { inputs: { text: "just words" } });
    await waitForRun(server, id);
    const run = await getRun(id);
    expect(run).toMatchObject({
      status: "completed",
      output: "just words",
      outputJson: null,
      finishReason: "stop",
      phase: null,
      memory: { messages: 0, dropped: 0 },
    });
  });

  test("SSE: run.completed carries outputJson, finishReason and memory", async () => {
    const thread = crypto.randomUUID();
    const minted = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
    expect(minted.status).toBe(200);
    const { token, url } = (await minted.json()) as { token: string; url: string };
    const stream = await SseConnection.open(url, { token });
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor((event) => event.event === "ready");
      const { id } = await createRun("contact-json", { inputs: { text: "Grace Hopper" }, thread });
      const completed = await stream.waitFor(
        (event) => event.event === "run.completed" && event.data.runId === id,
      );
      const run = await getRun(id);
      expectJsonRun(run, { messages: 0, dropped: 0 });
      expect(completed.data).toMatchObject({
        runId: id,
        output: run.output,
        outputJson: run.outputJson,
        finishReason: "stop",
        memory: { messages: 0, dropped: 0 },
      });
      expectValid(componentValidator(document, "RunCompletedEvent"), completed.data);
    } finally {
      stream.close();
    }
  });

  test("tRPC run.get returns the run with the same fields as REST", async () => {
    const { id } = await createRun("contact-json", { inputs: { text: "Katherine Johnson" } });
    await waitForRun(server, id);
    const run = await getRun(id);
    const viaTrpc = await fetch(
      `${server.url}/trpc/run.get?input=${encodeURIComponent(JSON.stringify({ id }))}`,
      {
        headers: { authorization: `Bearer ${server.apiKey}` },
      },
    );
    expect(viaTrpc.status).toBe(200);
    const body = (await viaTrpc.json()) as { result: { data: Run } };
    expect(body.result.data).toEqual(run);
    expectJsonRun(body.result.data, { messages: 0, dropped: 0 });
  });

  test("a webhook delivery of run.completed carries outputJson, finishReason, phase and memory", async () => {
    const received: Array<{ verified: boolean; payload: { type: string; data: Run } }> = [];
    let secret = "";
    const receiver = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const body = await request.text();
        let verified = false;
        try {
          new Webhook(secret).verify(body, Object.fromEntries(request.headers.entries()));
          verified = true;
        } catch {
          verified = false;
        }
        received.push({ verified, payload: JSON.parse(body) });
        return new Response("ok");
      },
    });
    try {
      // An environment of its own, so the other tests' runs deliver nothing here.
      expect((await server.cli("envs", "set", server.tenantId, "hooks", "PURPOSE=webhooks")).code).toBe(0);
      const added = await server.cli<{ secret: string }>(
        "webhooks",
        "add",
        server.tenantId,
        "hooks",
        `http://127.0.0.1:${receiver.port}/hook`,
      );
      expect(added.code).toBe(0);
      secret = added.json.secret;

      const { id } = await createRun("contact-json", {
        inputs: { text: "Alan Turing" },
        environment: "hooks",
      });
      await waitForRun(server, id);
      const deadline = Date.now() + 20_000;
      while (!received.some((item) => item.payload.data.id === id)) {
        if (Date.now() > deadline) throw new Error("no webhook delivery for the run");
        await Bun.sleep(25);
      }
      const delivery = received.find((item) => item.payload.data.id === id)!;
      expect(delivery.verified).toBe(true);
      const run = await getRun(id);
      expect(delivery.payload.type).toBe("run.completed");
      expect(delivery.payload.data).toMatchObject({
        id,
        status: "completed",
        output: run.output,
        outputJson: run.outputJson,
        finishReason: "stop",
        phase: null,
        memory: { messages: 0, dropped: 0 },
      });
      expect(validateContact(delivery.payload.data.outputJson)).toBe(true);
    } finally {
      receiver.stop(true);
    }
  });

  test("the demo prompt extract-contact declares its schema and answers JSON matching it, without a key", async () => {
    const got = await fetch(
      `${server.url}/trpc/prompt.get?input=${encodeURIComponent(JSON.stringify({ slug: "extract-contact" }))}`,
      { headers: { authorization: `Bearer ${server.apiKey}` } },
    );
    expect(got.status).toBe(200);
    const version = ((await got.json()) as { result: { data: Record<string, unknown> } }).result.data;
    expect(version).toMatchObject({
      model: "dev:echo",
      output: { format: "json_schema", strict: true },
      memory: null,
      providerOptions: null,
    });
    expectValid(componentValidator(document, "PromptVersion"), version);
    const schema = (version.output as { schema: object }).schema;

    const { id } = await createRun("extract-contact", {
      inputs: { text: "Write to Ada Lovelace at ada@example.com about engines." },
    });
    const run = await waitForRun(server, id);
    expect(run.status, JSON.stringify(run)).toBe("completed");
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(run.outputJson), JSON.stringify(validate.errors)).toBe(true);
    expect(run.finishReason).toBe("stop");
  });
});
