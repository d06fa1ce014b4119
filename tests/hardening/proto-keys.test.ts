/**
 * A JSON key named `__proto__` (and `constructor`, `toString`, …) is an ordinary key: where the
 * rules do not allow it the request is a 400, on REST, tRPC and in prompt files pushed with the
 * CLI, and it never changes how other keys are read (docs/SECURITY.md). Bodies are sent as raw
 * text: a JS object literal with `__proto__` would set a prototype instead of a key.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type TestServer } from "../support/server.ts";
import { countRows, pushPrompts } from "./support.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await pushPrompts(server, server.tenantId, [
    {
      slug: "shape",
      model: "dev:echo",
      inputs: { payload: { type: "object" } },
      messages: [{ role: "user", content: "{{payload}}" }],
    },
  ]);
});
afterAll(async () => {
  await server?.dispose();
});

const post = (path: string, rawBody: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json", ...headers },
    body: rawBody,
  });
const restCreate = (rawBody: string, headers?: Record<string, string>) =>
  post("/api/v1/prompts/greet/latest/runs", rawBody, headers);
/** tRPC run.create with the same body plus slug and version, spliced in as text. */
const trpcCreate = (rawBody: string) =>
  post("/trpc/run.create", `{"slug":"greet","version":"latest",${rawBody.slice(1)}`);
const errorText = async (response: Response): Promise<string> => {
  const body = (await response.json()) as { error: string | { message: string } };
  return typeof body.error === "string" ? body.error : body.error.message;
};
const runCount = () => countRows(server, "select count(*) as n from runs");

const refused: Array<[string, string, RegExp]> = [
  ["__proto__ as an undeclared input", '{"inputs":{"name":"a","__proto__":"x"}}', /inputs\.__proto__/],
  [
    "__proto__ object as an input",
    '{"inputs":{"name":"a","__proto__":{"tone":"rude"}}}',
    /inputs\.__proto__/,
  ],
  [
    "__proto__ as a metadata key with an object",
    '{"inputs":{"name":"a"},"metadata":{"__proto__":{"isAdmin":"true"}}}',
    /metadata\.__proto__/,
  ],
  [
    "__proto__ as a metadata key with a string",
    '{"inputs":{"name":"a"},"metadata":{"__proto__":"x"}}',
    /metadata\.__proto__/,
  ],
  [
    "__proto__ as an envVars key",
    '{"inputs":{"name":"a"},"envVars":{"__proto__":"x"}}',
    /envVars\.__proto__/,
  ],
  [
    "__proto__ as a top-level field",
    '{"inputs":{"name":"a"},"__proto__":{"priority":"onsite"}}',
    /__proto__/,
  ],
  ["constructor as an undeclared input", '{"inputs":{"name":"a","constructor":"x"}}', /inputs\.constructor/],
  ["toString as an undeclared input", '{"inputs":{"name":"a","toString":"x"}}', /inputs\.toString/],
  ["valueOf as an undeclared input", '{"inputs":{"name":"a","valueOf":"x"}}', /inputs\.valueOf/],
  [
    "hasOwnProperty as an undeclared input",
    '{"inputs":{"name":"a","hasOwnProperty":"x"}}',
    /inputs\.hasOwnProperty/,
  ],
];

describe("create run", () => {
  for (const [label, body, message] of refused) {
    test(`REST: ${label} is 400 and creates nothing`, async () => {
      const before = await runCount();
      const response = await restCreate(body);
      expect(response.status).toBe(400);
      expect(await errorText(response)).toMatch(message);
      expect(await runCount()).toBe(before);
    });
    test(`tRPC: ${label} is 400 and creates nothing`, async () => {
      const before = await runCount();
      const response = await trpcCreate(body);
      expect(response.status).toBe(400);
      expect(await errorText(response)).toMatch(message);
      expect(await runCount()).toBe(before);
    });
  }

  test("a nested __proto__ inside an object input is an ordinary key: stored, and part of the idempotency hash", async () => {
    const create = (payload: string) =>
      post("/api/v1/prompts/shape/latest/runs", `{"inputs":{"payload":${payload}}}`, {
        "idempotency-key": "proto-nested",
      });
    const first = await create('{"a":1,"__proto__":{"b":2}}');
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const [row] = await server.sql<{ inputs: unknown }>("select inputs from runs where id = ?", [id]);
    const stored = typeof row?.inputs === "string" ? JSON.parse(row.inputs) : row?.inputs;
    expect(JSON.stringify(stored)).toBe('{"payload":{"a":1,"__proto__":{"b":2}}}');
    // Same key, a body that differs only in the nested __proto__: another request, so 409.
    expect((await create('{"a":1,"__proto__":{"b":3}}')).status).toBe(409);
    expect((await create('{"a":1}')).status).toBe(409);
    expect((await create('{"a":1,"__proto__":{"b":2}}')).status).toBe(202);
  });
});

describe("prompt files (CLI push)", () => {
  const push = async (name: string, text: string) => {
    const directory = mkdtempSync(join(tmpdir(), "promptrun-proto-"));
    try {
      writeFileSync(join(directory, name), text);
      const pushed = await server.cli<{ error?: string }>(
        "prompts",
        "push",
        directory,
        "--tenant",
        server.tenantId,
      );
      // With --json the error is the one JSON document on stdout.
      return { code: pushed.code, error: `${pushed.json?.error ?? ""}${pushed.stderr}` };
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  };

  test("a JSON prompt file declaring an input named __proto__ is refused", async () => {
    const pushed = await push(
      "p.json",
      '{"slug":"proto-json","model":"dev:echo","inputs":{"__proto__":{"type":"string"}},"messages":[{"role":"user","content":"{{__proto__}}"}]}',
    );
    expect(pushed.code).not.toBe(0);
    expect(pushed.error).toContain("inputs.__proto__");
  });

  test("a YAML prompt file declaring an input named __proto__ is refused", async () => {
    const pushed = await push(
      "p.yaml",
      'slug: proto-yaml\nmodel: dev:echo\ninputs:\n  __proto__: { type: string }\nmessages:\n  - { role: user, content: "{{__proto__}}" }\n',
    );
    expect(pushed.code).not.toBe(0);
    expect(pushed.error).toContain("inputs.__proto__");
  });

  test("a __proto__ key in params is refused", async () => {
    const pushed = await push(
      "p.json",
      '{"slug":"proto-params","model":"dev:echo","params":{"__proto__":{"delayMs":5}},"messages":[{"role":"user","content":"hi"}]}',
    );
    expect(pushed.code).not.toBe(0);
    expect(pushed.error).toContain("params.__proto__");
  });

  test("a template naming {{constructor}} or {{toString}} without declaring it is refused", async () => {
    for (const name of ["constructor", "toString"]) {
      const pushed = await push(
        "p.yaml",
        `slug: proto-${name.toLowerCase()}\nmodel: dev:echo\nmessages:\n  - { role: user, content: "{{${name}}}" }\n`,
      );
      expect({ name, code: pushed.code }).not.toEqual({ name, code: 0 });
      expect(pushed.error).toContain(`undeclared input: ${name}`);
    }
  });
});

describe("CLI env vars", () => {
  test("`envs set … __proto__=x` is refused, not silently ignored", async () => {
    const set = await server.cli<{ error?: string }>(
      "envs",
      "set",
      server.tenantId,
      "production",
      "__proto__=x",
    );
    expect(set.code).not.toBe(0);
    expect(`${set.json?.error ?? ""}${set.stderr}`).toContain("UPPER_CASE");
  });
});
