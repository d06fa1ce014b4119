/**
 * The OpenAPI document is generated from the contract's zod schemas; here it is checked to be a
 * valid OpenAPI 3.1 document and to describe what the server actually returns.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { pushPrompts } from "./hardening/support.ts";
import {
  responseValidator as documentResponseValidator,
  fetchOpenApiDocument,
  type OpenApiDocumentJson,
} from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

let server: TestServer;
let document: OpenApiDocumentJson;

beforeAll(async () => {
  // One stream per thread, so that the stream's 429 is cheap to provoke.
  server = await startServer({ env: { PROMPTRUN_MAX_STREAMS_PER_THREAD: "1" } });
  document = await fetchOpenApiDocument(server.url);
});
afterAll(async () => {
  await server?.dispose();
});

/** Validator for one response of one operation, resolving $refs against the document. */
const responseValidator = (path: string, method: string, status: string) =>
  documentResponseValidator(document, path, method, status);

test("the document is valid OpenAPI with the REST contract's operations", async () => {
  const validator = new Validator();
  const result = await validator.validate(document as unknown as Parameters<Validator["validate"]>[0]);
  if (!result.valid) console.error(JSON.stringify(result.errors, null, 2).slice(0, 2000));
  expect(result.valid).toBe(true);
  expect(Object.keys(document.paths)).toEqual(
    expect.arrayContaining([
      "/api/v1/threads/{thread}/stream-token",
      "/api/v1/prompts/{slug}/{version}/runs",
      "/api/v1/promptruns/{id}",
    ]),
  );
});

test("real responses validate against the document", async () => {
  const created = await api(server, "/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    json: { inputs: { name: "Schema" } },
  });
  expect(created.status).toBe(202);
  const createdBody = (await created.json()) as { id: string };
  const validateCreated = responseValidator("/api/v1/prompts/{slug}/{version}/runs", "post", "202");
  expect(validateCreated(createdBody)).toBe(true);

  const pending = await (await api(server, `/api/v1/promptruns/${createdBody.id}`)).json();
  const validateRun = responseValidator("/api/v1/promptruns/{id}", "get", "200");
  expect(validateRun(pending), JSON.stringify(validateRun.errors)).toBe(true);
  const completed = await waitForRun(server, createdBody.id);
  expect(validateRun(completed), JSON.stringify(validateRun.errors)).toBe(true);

  const token = await (
    await api(server, `/api/v1/threads/${crypto.randomUUID()}/stream-token`, { method: "POST" })
  ).json();
  expect(responseValidator("/api/v1/threads/{thread}/stream-token", "post", "200")(token)).toBe(true);

  const notFound = await (await api(server, `/api/v1/promptruns/${crypto.randomUUID()}`)).json();
  expect(responseValidator("/api/v1/promptruns/{id}", "get", "404")(notFound)).toBe(true);
  const invalid = await (
    await api(server, "/api/v1/prompts/greet/latest/runs", { method: "POST", json: { nope: 1 } })
  ).json();
  expect(responseValidator("/api/v1/prompts/{slug}/{version}/runs", "post", "400")(invalid)).toBe(true);
});

test("a completed run of a JSON prompt validates, outputJson included", async () => {
  await pushPrompts(server, server.tenantId, [
    {
      slug: "openapi-json",
      model: "dev:echo",
      inputs: { text: { type: "string" } },
      messages: [{ role: "user", content: "{{text}}" }],
      output: {
        format: "json_schema",
        strict: true,
        schema: {
          type: "object",
          properties: { answer: { type: "string" }, score: { type: "integer" } },
          required: ["answer", "score"],
          additionalProperties: false,
        },
      },
    },
  ]);
  const created = await api(server, "/api/v1/prompts/openapi-json/latest/runs", {
    method: "POST",
    json: { inputs: { text: "rate this" } },
  });
  expect(created.status).toBe(202);
  const { id } = (await created.json()) as { id: string };
  const run = await waitForRun(server, id);
  expect(run.status, JSON.stringify(run)).toBe("completed");
  expect(run.outputJson).toEqual({ answer: expect.any(String), score: expect.any(Number) });
  expect(run).toMatchObject({ finishReason: "stop", phase: null, memory: { messages: 0, dropped: 0 } });
  const validateRun = responseValidator("/api/v1/promptruns/{id}", "get", "200");
  expect(validateRun(run), JSON.stringify(validateRun.errors)).toBe(true);
  // The document's own example is a run of this shape.
  const example = (
    document.paths["/api/v1/promptruns/{id}"]!.get as {
      responses: Record<
        string,
        { content: Record<string, { examples: Record<string, { value: unknown }> }> }
      >;
    }
  ).responses["200"]?.content["application/json"]?.examples.completedJson?.value;
  expect(validateRun(example), JSON.stringify(validateRun.errors)).toBe(true);
});

test("/docs serves a human-readable API reference that works offline", async () => {
  const page = await fetch(`${server.url}/docs`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  const html = await page.text();
  expect(html).toContain("/api/v1/openapi.json");
  const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((match) => match[1]!);
  expect(scripts.length).toBeGreaterThan(0);
  for (const src of scripts) {
    expect(src.startsWith("/")).toBe(true);
    const script = await fetch(`${server.url}${src}`);
    expect(script.status).toBe(200);
  }
});

const repoRoot = join(import.meta.dir, "..");

/** `redocly lint` (recommended rules, repo's redocly.yaml) of a document file, run by Bun offline. */
async function redoclyLint(file: string): Promise<{ totals: Record<string, number>; problems: unknown[] }> {
  const lint = Bun.spawn(
    [
      process.execPath,
      join(import.meta.dir, "node_modules/@redocly/cli/bin/cli.js"),
      "lint",
      file,
      "--config",
      join(repoRoot, "redocly.yaml"),
      "--format=json",
    ],
    {
      cwd: repoRoot,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [output, errorOutput] = await Promise.all([
    new Response(lint.stdout).text(),
    new Response(lint.stderr).text(),
  ]);
  await lint.exited;
  const start = output.indexOf("{");
  if (start === -1) throw new Error(`redocly printed no report: ${output}\n${errorOutput}`);
  return JSON.parse(output.slice(start));
}

test("the served document passes redocly lint with no error and no warning", async () => {
  const directory = await mkdtemp(join(tmpdir(), "promptrun-openapi-"));
  try {
    const file = join(directory, "openapi.json");
    await writeFile(file, JSON.stringify(document, null, 2));
    const report = await redoclyLint(file);
    expect(report.problems, JSON.stringify(report.problems, null, 2).slice(0, 3000)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}, 60_000);

test("the document lists every webhook event with the Standard Webhooks headers", () => {
  const webhooks = (
    document as unknown as { webhooks: Record<string, { post: { parameters: { name: string }[] } }> }
  ).webhooks;
  expect(Object.keys(webhooks).sort()).toEqual([
    "document.failed",
    "document.ready",
    "prompt.tag.moved",
    "prompt.version.created",
    "run.completed",
    "run.failed",
    "run.requires_action",
    "workflow.completed",
    "workflow.failed",
  ]);
  for (const webhook of Object.values(webhooks)) {
    expect(webhook.post.parameters.map((parameter) => parameter.name).sort()).toEqual([
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
    ]);
  }
});

test("an Idempotency-Key reused with another body answers the documented 409", async () => {
  const key = `openapi-${crypto.randomUUID()}`;
  const create = (name: string) =>
    api(server, "/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      headers: { "idempotency-key": key },
      json: { inputs: { name } },
    });
  expect((await create("First")).status).toBe(202);
  const reused = await create("Second");
  expect(reused.status).toBe(409);
  const body = await reused.json();
  expect(body).toEqual({ error: "Idempotency-Key reused with a different request", code: "conflict" });
  const validate = responseValidator("/api/v1/prompts/{slug}/{version}/runs", "post", "409");
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
});

test("a method a documented path does not accept answers the documented 405 with Allow", async () => {
  const cases: Array<[string, string, string, string]> = [
    ["/api/v1/prompts/{slug}/{version}/runs", "/api/v1/prompts/greet/latest/runs", "GET", "POST"],
    ["/api/v1/promptruns/{id}", `/api/v1/promptruns/${crypto.randomUUID()}`, "DELETE", "GET, HEAD"],
    [
      "/api/v1/threads/{thread}/stream-token",
      `/api/v1/threads/${crypto.randomUUID()}/stream-token`,
      "GET",
      "POST",
    ],
    ["/api/v1/openapi.json", "/api/v1/openapi.json", "POST", "GET, HEAD"],
    [
      "/api/v1/promptruns/{id}/tool-outputs",
      `/api/v1/promptruns/${crypto.randomUUID()}/tool-outputs`,
      "GET",
      "POST",
    ],
    ["/stream/{thread}", `/stream/${crypto.randomUUID()}`, "POST", "GET, HEAD"],
  ];
  for (const [documentPath, path, method, allow] of cases) {
    const operations = document.paths[documentPath]!;
    const documented = Object.values(operations)[0] as {
      responses: Record<string, { headers?: Record<string, { schema: { const?: string } }> }>;
    };
    expect(documented.responses["405"]?.headers?.Allow?.schema.const).toBe(allow);
    const response = await api(server, path, { method });
    expect(response.status, `${method} ${path}`).toBe(405);
    expect(response.headers.get("allow")).toBe(allow);
    const body = (await response.json()) as { code: string; error: string };
    expect(body.code).toBe("method_not_allowed");
    expect(body.error).toBe(`method ${method} not allowed on ${path}`);
    const operationMethod = Object.keys(operations)[0]!;
    const validate = responseValidator(documentPath, operationMethod, "405");
    expect(validate(body), `${path} ${JSON.stringify(validate.errors)} ${JSON.stringify(body)}`).toBe(true);
  }
});

test("a second stream on a thread past the cap answers the documented 429", async () => {
  const thread = crypto.randomUUID();
  const { token } = (await (
    await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" })
  ).json()) as { token: string };
  const open = () =>
    fetch(`${server.url}/stream/${thread}`, { headers: { authorization: `Bearer ${token}` } });
  const first = await open();
  try {
    expect(first.status).toBe(200);
    const second = await open();
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("5");
    const body = (await second.json()) as { code: string };
    expect(body.code).toBe("rate_limited");
    expect(responseValidator("/stream/{thread}", "get", "429")(body)).toBe(true);
  } finally {
    await first.body?.cancel();
  }
});
