/**
 * The OpenAPI document is generated from the contract's zod schemas; here it is checked to be a
 * valid OpenAPI 3.1 document and to describe what the server actually returns.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

let server: TestServer;
let document: {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown> };
};

beforeAll(async () => {
  server = await startServer();
  const response = await fetch(`${server.url}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  document = (await response.json()) as typeof document;
});
afterAll(async () => {
  await server?.dispose();
});

/** Validator for one response of one operation, resolving $refs against the document. */
function responseValidator(path: string, method: string, status: string) {
  const operation = document.paths[path]?.[method] as
    | { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
    | undefined;
  const schema = operation?.responses[status]?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`no schema for ${method.toUpperCase()} ${path} ${status}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "doc", components: document.components }, "doc");
  const rewrite = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(rewrite)
      : value && typeof value === "object"
        ? Object.fromEntries(
            Object.entries(value).map(([key, inner]) => [
              key,
              key === "$ref" && typeof inner === "string" ? `doc${inner}` : rewrite(inner),
            ]),
          )
        : value;
  return ajv.compile(rewrite(schema) as object);
}

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
