/**
 * POST /api/v1/prompts/{slug}/{version}/render end to end (real server, SQLite or Postgres): the
 * rendered messages equal what a run then sends on the wire (a wire-level fake OpenAI serving as
 * an OpenAI-compatible provider), the memory window of a thread, env values masked, create-run's
 * 400s, tenant isolation, 401, and every answer checked against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { type FakeRequest, startFakeOpenAI } from "@promptrun/core/testing";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

const SECRET_VALUE = "sk-brand-secret-7f3a9c";
const RENDER_PATH = "/api/v1/prompts/{slug}/{version}/render";

const fake = startFakeOpenAI(() => ({
  type: "stream",
  tokens: ["Hi", " there"],
  usage: { input: 5, output: 2 },
}));
let server: TestServer;
let otherKey: string;
let document: OpenApiDocumentJson;

/** Prompt files: greet's messages on the fake provider, with an env var and a memory window. */
const PROMPTS: Record<string, string> = {
  wire: `slug: wire-greet
model: fake:gpt-test
params: { temperature: 0.3 }
inputs:
  name: { type: string }
  tone: { type: string, default: friendly }
messages:
  - { role: system, content: "Greet people in a {{tone}} tone. Sign as {{env.BRAND}}." }
  - { role: user, content: "Hello {{name}}, welcome to Promptrun!" }
`,
  short: `slug: short-memory
model: fake:gpt-test
memory: { maxMessages: 2 }
inputs: { name: { type: string } }
messages:
  - { role: user, content: "Hello {{name}}" }
`,
  image: `slug: look
model: dev:echo
inputs: { shot: { type: image } }
messages:
  - role: user
    content:
      - { type: text, text: "What is this?" }
      - { type: image, image: "{{shot}}" }
`,
};

const push = async (tenantId: string, dirName: string, files: Record<string, string>) => {
  const dir = `${server.dataDir}/${dirName}`;
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await Bun.write(`${dir}/${name}.yaml`, text);
  const pushed = await server.cli("prompts", "push", dir, "--tenant", tenantId);
  expect(pushed.code, pushed.stderr).toBe(0);
};

beforeAll(async () => {
  server = await startServer({
    env: {
      PROMPTRUN_PROVIDERS: `fake=${fake.baseUrl}`,
      PROMPTRUN_ALLOW_PRIVATE_URLS: "false",
    },
  });
  await push(server.tenantId, "render-prompts", PROMPTS);
  const set = await server.cli("envs", "set", server.tenantId, "production", `BRAND=${SECRET_VALUE}`);
  expect(set.code, set.stderr).toBe(0);
  const other = await server.cli<{ tenant: { id: string }; apiKey: string }>("tenants", "create", "other");
  otherKey = other.json.apiKey;
  await push(other.json.tenant.id, "other-prompts", {
    secret: "slug: b-only\nmodel: dev:echo\nmessages:\n  - { role: user, content: hi }\n",
  });
  document = await fetchOpenApiDocument(server.url);
});
afterAll(async () => {
  await server?.dispose();
  await fake.close();
});

const render = (slug: string, version: string, body: unknown, key?: string | null) =>
  api(server, `/api/v1/prompts/${slug}/${version}/render`, {
    method: "POST",
    json: body,
    ...(key !== undefined ? { key } : {}),
  });

/** Reads a response and checks it against the document's schema for its status. */
const documented = async (response: Response): Promise<Record<string, unknown>> => {
  const body = (await response.json()) as Record<string, unknown>;
  const validate = responseValidator(document, RENDER_PATH, "post", String(response.status));
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  return body;
};

interface Rendered {
  model: string;
  params: Record<string, unknown>;
  messages: Array<{ role: string; content: unknown }>;
  tools: unknown[];
  output: unknown;
  memory: { messages: number; dropped: number };
}

const renderOk = async (slug: string, body: unknown): Promise<Rendered> => {
  const response = await render(slug, "latest", body);
  expect(response.status).toBe(200);
  return (await documented(response)) as unknown as Rendered;
};

/** Runs once and returns the messages the provider received. */
const runAndCapture = async (slug: string, body: Record<string, unknown>): Promise<unknown> => {
  const before = fake.requests.length;
  const created = await api(server, `/api/v1/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  expect(created.status).toBe(202);
  const run = await waitForRun(server, ((await created.json()) as { id: string }).id);
  expect(run.status, JSON.stringify(run)).toBe("completed");
  const sent = fake.requests.slice(before) as FakeRequest[];
  expect(sent).toHaveLength(1);
  return (sent[0]!.body as { messages: unknown }).messages;
};

/** The rendered messages with each masked env var replaced by its value: what the run sends. */
const unmasked = (messages: unknown) =>
  JSON.parse(JSON.stringify(messages).replaceAll("[env:BRAND]", SECRET_VALUE));

describe("render = what the run sends", () => {
  test("greet on dev:echo: the rendered user message is what the run echoes", async () => {
    const rendered = await renderOk("greet", { inputs: { name: "Ada" } });
    expect(rendered).toMatchObject({
      model: "dev:echo",
      tools: [],
      output: null,
      memory: { messages: 0, dropped: 0 },
    });
    expect(rendered.messages).toEqual([
      { role: "system", content: "Greet people in a friendly tone." },
      { role: "user", content: "Hello Ada, welcome to Promptrun!" },
    ]);
    const created = await api(server, "/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      json: { inputs: { name: "Ada" } },
    });
    const run = await waitForRun(server, ((await created.json()) as { id: string }).id);
    expect(run.output).toBe(rendered.messages[1]!.content);
  });

  test("on the wire: the rendered messages (env unmasked) are the messages the run sent", async () => {
    const body = { inputs: { name: "Ada", tone: "warm" } };
    const rendered = await renderOk("wire-greet", body);
    expect(rendered).toMatchObject({ model: "fake:gpt-test", params: { temperature: 0.3 } });
    expect(rendered.messages[0]).toEqual({
      role: "system",
      content: "Greet people in a warm tone. Sign as [env:BRAND].",
    });
    const sent = await runAndCapture("wire-greet", body);
    expect(sent).toEqual(unmasked(rendered.messages));
  });

  test("a thread with history: the memory window in send order, counted, equal to the next run's request", async () => {
    const thread = crypto.randomUUID();
    await runAndCapture("wire-greet", { inputs: { name: "Ada" }, thread });
    await runAndCapture("wire-greet", { inputs: { name: "Bob" }, thread });
    const body = { inputs: { name: "Cy" }, thread };
    const rendered = await renderOk("wire-greet", body);
    expect(rendered.memory).toEqual({ messages: 4, dropped: 0 });
    expect(rendered.messages.map((message) => [message.role, message.content])).toEqual([
      ["system", "Greet people in a friendly tone. Sign as [env:BRAND]."],
      ["user", "Hello Ada, welcome to Promptrun!"],
      ["assistant", "Hi there"],
      ["user", "Hello Bob, welcome to Promptrun!"],
      ["assistant", "Hi there"],
      ["user", "Hello Cy, welcome to Promptrun!"],
    ]);
    expect(await runAndCapture("wire-greet", body)).toEqual(unmasked(rendered.messages));
    // Another channel of the same thread has no history.
    const side = await renderOk("wire-greet", { ...body, channel: "side" });
    expect(side.memory).toEqual({ messages: 0, dropped: 0 });
  });

  test("memory.maxMessages: the window keeps the newest whole exchanges and counts the dropped", async () => {
    const thread = crypto.randomUUID();
    await runAndCapture("short-memory", { inputs: { name: "one" }, thread });
    await runAndCapture("short-memory", { inputs: { name: "two" }, thread });
    const body = { inputs: { name: "three" }, thread };
    const rendered = await renderOk("short-memory", body);
    expect(rendered.memory).toEqual({ messages: 2, dropped: 2 });
    expect(rendered.messages.map((message) => message.content)).toEqual([
      "Hello two",
      "Hi there",
      "Hello three",
    ]);
    expect(await runAndCapture("short-memory", body)).toEqual(rendered.messages);
  });

  test("env values never appear: not the environment's, not the request's envVars", async () => {
    const response = await render("wire-greet", "latest", {
      inputs: { name: "Ada" },
      envVars: { BRAND: "request-level-secret-42" },
    });
    const text = await response.clone().text();
    expect(response.status).toBe(200);
    await documented(response);
    expect(text).toContain("[env:BRAND]");
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain("request-level-secret-42");
  });

  test("an env var set nowhere is the 400 the run would fail with", async () => {
    const response = await render("wire-greet", "latest", {
      inputs: { name: "Ada" },
      environment: "staging",
    });
    // staging does not exist: create-run's environment error comes first.
    expect(response.status).toBe(400);
    expect((await documented(response)).error).toBe("environment: unknown environment 'staging'");
    expect((await server.cli("envs", "set", server.tenantId, "staging", "OTHER=1")).code).toBe(0);
    const missing = await render("wire-greet", "latest", { inputs: { name: "Ada" }, environment: "staging" });
    expect(missing.status).toBe(400);
    expect(String((await documented(missing)).error)).toStartWith("env var 'BRAND' is not set");
  });
});

describe("errors as on create-run", () => {
  const createRun = (slug: string, version: string, body: unknown, key?: string | null) =>
    api(server, `/api/v1/prompts/${slug}/${version}/runs`, {
      method: "POST",
      json: body,
      ...(key !== undefined ? { key } : {}),
    });

  test("bad bodies and inputs: the same status and body as create-run", async () => {
    const tinyPng = Buffer.from("not a png at all").toString("base64");
    const cases: Array<[string, string, unknown]> = [
      ["greet", "latest", { inputs: {} }],
      ["greet", "latest", { inputs: { name: 5 } }],
      ["greet", "latest", { inputs: { name: "A", extra: 1 } }],
      ["greet", "latest", { inputs: { name: "A" }, thread: "nope" }],
      ["greet", "latest", { inputs: { name: "A" }, envVars: { lower: "x" } }],
      ["greet", "latest", { inputs: { name: "A" }, environment: "nowhere" }],
      ["greet", "latest", []],
      ["greet", "42", { bogus: true }],
      ["look", "latest", { inputs: { shot: "http://example.com/cat.png" } }],
      ["look", "latest", { inputs: { shot: "https://user:pw@example.com/cat.png" } }],
      ["look", "latest", { inputs: { shot: "https://127.0.0.1/cat.png" } }],
      ["look", "latest", { inputs: { shot: "https://localhost/cat.png" } }],
      ["look", "latest", { inputs: { shot: `data:image/png;base64,${tinyPng}` } }],
    ];
    for (const [slug, version, body] of cases) {
      const rendered = await render(slug, version, body);
      const created = await createRun(slug, version, body);
      const label = `${slug}/${version} ${JSON.stringify(body).slice(0, 80)}`;
      expect([rendered.status, label]).toEqual([created.status, label]);
      expect([rendered.status, label]).not.toEqual([200, label]);
      expect(await documented(rendered)).toEqual((await created.json()) as Record<string, unknown>);
    }
  });

  test("render refuses priority and metadata (they change nothing it could show)", async () => {
    for (const extra of [{ priority: "low" }, { metadata: { user: "u" } }]) {
      const response = await render("greet", "latest", { inputs: { name: "A" }, ...extra });
      expect(response.status).toBe(400);
      expect(String((await documented(response)).error)).toStartWith("unknown field");
    }
  });

  test("another tenant's prompt is a 404, both ways; 401 without or with a bad key", async () => {
    const theirs = await render("b-only", "latest", { inputs: {} });
    expect(theirs.status).toBe(404);
    expect((await documented(theirs)).error).toBe("prompt 'b-only' not found");
    const ours = await render("wire-greet", "latest", { inputs: { name: "A" } }, otherKey);
    expect(ours.status).toBe(404);
    const ourText = JSON.stringify(await documented(ours));
    expect(ourText).not.toContain("BRAND");
    expect((await render("b-only", "latest", { inputs: {} }, otherKey)).status).toBe(200);
    for (const key of [null, "pr_live_nope"]) {
      const response = await render("greet", "latest", { inputs: { name: "A" } }, key);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toStartWith("Bearer");
      await documented(response);
    }
  });

  test("405 with Allow, 415 and 413 answer as documented; an inactive tenant is not refused", async () => {
    const path = "/api/v1/prompts/greet/latest/render";
    const wrongMethod = await api(server, path);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    await documented(wrongMethod);
    const plain = await api(server, path, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(plain.status).toBe(415);
    await documented(plain);
    const big = await api(server, path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"inputs": {"name": "${"x".repeat(2 * 1024 * 1024)}"}}`,
    });
    expect(big.status).toBe(413);
    await documented(big);
    const lapsed = await server.cli<{ apiKey: string }>("tenants", "create", "lapsed", "--inactive");
    const inactive = await render("greet", "latest", { inputs: { name: "A" } }, lapsed.json.apiKey);
    // Not 403: the tenant has no prompts, so the answer is the prompt's 404.
    expect(inactive.status).toBe(404);
    await documented(inactive);
  });
});
