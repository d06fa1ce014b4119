/**
 * The OpenAPI document is generated from the contract's zod schemas; here it is checked to be a
 * valid OpenAPI 3.1 document and to describe what the server actually returns.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
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
  server = await startServer();
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
