/**
 * The /api/v1 contract over a real server: every status code of docs/PRODUCT-RULES.md for the three contract
 * operations, their precedence, tenant isolation, version/tag/id resolution, the API-key
 * lifecycle, and hostile input that must never take the server down.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import { tablesContaining } from "./support/tables.ts";

let server: TestServer;
let otherTenant: { id: string; apiKey: string };
let inactiveTenant: { id: string; apiKey: string };
const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  server = await startServer();
  const other = await server.cli<{ tenant: { id: string }; apiKey: string }>("tenants", "create", "other");
  otherTenant = { id: other.json.tenant.id, apiKey: other.json.apiKey };
  const inactive = await server.cli<{ tenant: { id: string }; apiKey: string }>(
    "tenants",
    "create",
    "lapsed",
    "--inactive",
  );
  inactiveTenant = { id: inactive.json.tenant.id, apiKey: inactive.json.apiKey };
});
afterAll(async () => {
  await server?.dispose();
});

const createRun = (
  body: unknown,
  options: { slug?: string; version?: string; key?: string | null; headers?: Record<string, string> } = {},
) =>
  api(server, `/api/v1/prompts/${options.slug ?? "greet"}/${options.version ?? "latest"}/runs`, {
    method: "POST",
    json: body,
    ...(options.key !== undefined ? { key: options.key } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });

const expectError = async (response: Response, status: number, messagePart?: string) => {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = (await response.json()) as { error: unknown };
  expect(typeof body.error).toBe("string");
  if (messagePart) expect(String(body.error)).toContain(messagePart);
  return body;
};

describe("create a prompt run", () => {
  test("202 with {id, thread}, Location, and the run reads back pending then completed", async () => {
    const response = await createRun({ inputs: { name: "Ada" } });
    expect(response.status).toBe(202);
    const body = (await response.json()) as { id: string; thread: string };
    expect(Object.keys(body).sort()).toEqual(["id", "thread"]);
    expect(response.headers.get("location")).toBe(`/api/v1/promptruns/${body.id}`);
    const run = await waitForRun(server, body.id);
    expect(run).toMatchObject({ id: body.id, status: "completed", error: null, thread: body.thread });
    expect(run.output).toBe("Hello Ada, welcome to Promptrun!");
    expect(run.tokenUsage).toMatchObject({ output: 5, inputCached: 0, reasoning: 0 });
    expect(typeof run.finishedAt).toBe("string");
  });

  test("a run continues a given thread; an unknown thread uuid is created", async () => {
    const thread = crypto.randomUUID();
    const first = (await (await createRun({ inputs: { name: "A" }, thread })).json()) as { thread: string };
    expect(first.thread).toBe(thread);
  });

  test("401 without a key, with a malformed header, with an unknown key", async () => {
    await expectError(await createRun({ inputs: {} }, { key: null }), 401);
    await expectError(await createRun({ inputs: {} }, { key: "pr_not_a_real_key" }), 401);
    const basic = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: "Basic Zm9vOmJhcg==", "content-type": "application/json" },
      body: "{}",
    });
    await expectError(basic, 401);
  });

  test("403 without an active subscription", async () => {
    await expectError(
      await createRun({ inputs: { name: "x" } }, { key: inactiveTenant.apiKey }),
      403,
      "subscription",
    );
  });

  test("415 for a missing or non-JSON content type; charset is accepted", async () => {
    const plain = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "text/plain" },
      body: '{"inputs":{"name":"x"}}',
    });
    await expectError(plain, 415);
    const none = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: new Blob(['{"inputs":{"name":"x"}}']),
    });
    await expectError(none, 415);
    const charset = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.apiKey}`,
        "content-type": "application/json; charset=utf-8",
      },
      body: '{"inputs":{"name":"x"}}',
    });
    expect(charset.status).toBe(202);
  });

  test("413 for a body over 1 MiB, and the server keeps serving", async () => {
    const huge = JSON.stringify({ inputs: { name: "x".repeat(1_100_000) } });
    await expectError(await createRun(JSON.parse(huge)), 413);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  test("400 for invalid JSON and for deep nesting", async () => {
    const broken = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: '{"inputs": {',
    });
    await expectError(broken, 400);
    const deep = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`;
    const nested = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: `{"inputs":{"name":"x"},"metadata":${deep}}`,
    });
    await expectError(nested, 400);
  });

  test("404 for unknown slug, version, tag and id; malformed slugs never escape", async () => {
    await expectError(await createRun({ inputs: {} }, { slug: "nope" }), 404);
    await expectError(await createRun({ inputs: {} }, { version: "99" }), 404);
    await expectError(await createRun({ inputs: {} }, { version: "no-such-tag" }), 404);
    await expectError(await createRun({ inputs: {} }, { version: UNKNOWN_UUID }), 404);
    for (const slug of ["..%2F..%2Fetc%2Fpasswd", "%2e%2e", "GREET", "gr%C3%A9et", "%00"]) {
      await expectError(await createRun({ inputs: { name: "x" } }, { slug }), 404);
    }
  });

  test("400 for schema violations, naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "inputs"],
      [{ inputs: "nope" }, "inputs"],
      [{ inputs: { name: "x" }, extra: true }, "extra"],
      [{ inputs: { name: "x" }, thread: "not-a-uuid" }, "thread"],
      [{ inputs: { name: "x" }, priority: "urgent" }, "priority"],
      [{ inputs: { name: "x" }, envVars: { lower: "x" } }, "UPPER_CASE"],
      [{ inputs: { name: "x" }, envVars: { A: 1 } }, "envVars"],
      [
        {
          inputs: { name: "x" },
          envVars: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`K${i}`, "v"])),
        },
        "50",
      ],
      [{ inputs: { name: "x" }, envVars: { BIG: "x".repeat(65_534) } }, "65536"],
      [{ inputs: { name: "x" }, metadata: { a: 1 } }, "metadata"],
      [{ inputs: { name: "x" }, channel: "" }, "channel"],
      [{ inputs: {} }, "inputs.name"],
      [{ inputs: { name: 42 } }, "inputs.name"],
      [{ inputs: { name: "x", unknown: 1 } }, "inputs.unknown"],
      [{ inputs: { name: "x" }, environment: "staging" }, "environment"],
      [[], "object"],
      [null, ""],
    ];
    for (const [body, part] of cases) {
      const response = await createRun(body);
      const error = await expectError(response, 400);
      if (part) expect(String(error.error)).toContain(part);
    }
  });

  test("precedence: 404 slug beats 400 body; 401 beats 404; 403 beats 415; 415 beats 413; 413 beats invalid JSON", async () => {
    await expectError(await createRun({ nonsense: true }, { slug: "nope" }), 404);
    await expectError(await createRun({ inputs: {} }, { slug: "nope", key: null }), 401);
    const inactiveWrongType = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${inactiveTenant.apiKey}`, "content-type": "text/plain" },
      body: "x",
    });
    await expectError(inactiveWrongType, 403);
    const wrongTypeHuge = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "text/plain" },
      body: "x".repeat(2_000_000),
    });
    await expectError(wrongTypeHuge, 415);
    const hugeBroken = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: `{${"x".repeat(2_000_000)}`,
    });
    await expectError(hugeBroken, 413);
    const brokenUnknownSlug = await fetch(`${server.url}/api/v1/prompts/nope/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: "{",
    });
    await expectError(brokenUnknownSlug, 400);
  });
});

describe("get a prompt run", () => {
  test("404 for malformed, unknown, and other-tenant ids; 401 without a key", async () => {
    const { id } = (await (await createRun({ inputs: { name: "Iso" } })).json()) as { id: string };
    await expectError(await api(server, "/api/v1/promptruns/not-a-uuid"), 404);
    await expectError(await api(server, "/api/v1/promptruns/not-a-uuid", { key: null }), 404);
    await expectError(await api(server, `/api/v1/promptruns/${UNKNOWN_UUID}`), 404);
    await expectError(await api(server, `/api/v1/promptruns/${id}`, { key: otherTenant.apiKey }), 404);
    await expectError(await api(server, `/api/v1/promptruns/${id}`, { key: null }), 401);
    const own = await api(server, `/api/v1/promptruns/${id}`);
    expect(own.status).toBe(200);
  });

  test("reading stays allowed without an active subscription", async () => {
    const response = await api(server, `/api/v1/promptruns/${UNKNOWN_UUID}`, { key: inactiveTenant.apiKey });
    await expectError(response, 404);
  });

  test("pending state rules hold while a run is queued", async () => {
    const thread = crypto.randomUUID();
    // Occupy the channel with a slow run, so the next one stays pending.
    await createRun(
      { inputs: { message: "one two three four five six seven eight nine ten" }, thread },
      { slug: "chat" },
    );
    const { id } = (await (
      await createRun({ inputs: { message: "later" }, thread }, { slug: "chat" })
    ).json()) as { id: string };
    const run = (await (await api(server, `/api/v1/promptruns/${id}`)).json()) as Record<string, unknown>;
    expect(run).toMatchObject({
      status: "pending",
      finishedAt: null,
      output: null,
      tokenUsage: null,
      cost: null,
      error: null,
    });
    const done = await waitForRun(server, id);
    expect(done.status).toBe("completed");
  });
});

describe("stream token", () => {
  test("200 with token, expiresAt and url; 404 malformed thread; 401; 403", async () => {
    const thread = crypto.randomUUID();
    const ok = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { token: string; expiresAt: string; url: string };
    expect(body.url).toBe(`${server.url}/stream/${thread}`);
    const ttl = (Date.parse(body.expiresAt) - Date.now()) / 1000;
    expect(ttl).toBeGreaterThan(200);
    expect(ttl).toBeLessThanOrEqual(301);
    await expectError(await api(server, "/api/v1/threads/not-a-uuid/stream-token", { method: "POST" }), 404);
    await expectError(
      await api(server, "/api/v1/threads/not-a-uuid/stream-token", { method: "POST", key: null }),
      404,
    );
    await expectError(
      await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST", key: null }),
      401,
    );
    await expectError(
      await api(server, `/api/v1/threads/${thread}/stream-token`, {
        method: "POST",
        key: inactiveTenant.apiKey,
      }),
      403,
    );
  });
});

describe("routes", () => {
  test("unknown route 404 and wrong method 405, with error bodies", async () => {
    await expectError(await fetch(`${server.url}/nope`), 404);
    await expectError(
      await fetch(`${server.url}/api/v1/promptruns/${UNKNOWN_UUID}`, { method: "DELETE" }),
      405,
    );
    await expectError(await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`), 405);
  });
});

describe("prompt versions, tags and ids", () => {
  test("push creates immutable versions; identical push creates nothing; tags move; ids resolve", async () => {
    const dir = `${server.dataDir}/prompts-v`;
    const write = (text: string) => Bun.write(`${dir}/p.yaml`, text);
    const yaml = (content: string) =>
      `slug: versioned\nmodel: dev:echo\ninputs: { word: { type: string } }\nmessages:\n  - { role: user, content: "${content} {{word}}" }\ntags: [beta]\n`;
    await write(yaml("one"));
    const first = await server.cli<Array<{ slug: string; version: number; id: string; tags: string[] }>>(
      "prompts",
      "push",
      dir,
      "--tenant",
      server.tenantId,
    );
    expect(first.json).toEqual([{ slug: "versioned", version: 1, id: expect.any(String), tags: ["beta"] }]);
    const again = await server.cli<Array<{ version: number; id: string }>>(
      "prompts",
      "push",
      dir,
      "--tenant",
      server.tenantId,
    );
    expect(again.json[0]).toMatchObject({ version: 1, id: first.json[0]!.id });
    await write(yaml("two"));
    const second = await server.cli<Array<{ version: number; id: string }>>(
      "prompts",
      "push",
      dir,
      "--tenant",
      server.tenantId,
    );
    expect(second.json[0]!.version).toBe(2);
    await server.cli("prompts", "tag", "versioned", "1", "stable", "--tenant", server.tenantId);

    const output = async (version: string) => {
      const response = await createRun({ inputs: { word: "w" } }, { slug: "versioned", version });
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      const run = await waitForRun(server, id);
      return run.output;
    };
    expect(await output("1")).toBe("one w");
    expect(await output("2")).toBe("two w");
    expect(await output("latest")).toBe("two w");
    expect(await output("beta")).toBe("two w");
    expect(await output("stable")).toBe("one w");
    expect(await output(first.json[0]!.id)).toBe("one w");
    // Another tenant cannot reach this prompt by slug or by version id.
    await expectError(
      await createRun(
        { inputs: { word: "w" } },
        { slug: "versioned", version: "1", key: otherTenant.apiKey },
      ),
      404,
    );
    await expectError(
      await createRun({ inputs: { word: "w" } }, { slug: "greet", version: first.json[0]!.id }),
      404,
    );
    await expectError(await createRun({ inputs: { word: "w" } }, { slug: "versioned", version: "01" }), 404);
  });
});

describe("API keys", () => {
  test("a created key works, is stored hashed, and stops working when revoked", async () => {
    const created = await server.cli<{ apiKey: string }>("keys", "create", otherTenant.id);
    const key = created.json.apiKey;
    expect((await api(server, `/api/v1/promptruns/${UNKNOWN_UUID}`, { key })).status).toBe(404);
    // The key's row is there (its prefix is stored for lookup), the key itself in no table.
    const rows = await server.sql<{ tenant_id: string }>("select * from api_keys");
    expect(rows.filter((row) => row.tenant_id === otherTenant.id).length).toBeGreaterThan(0);
    expect(await tablesContaining(server, key)).toEqual([]);
    const revoked = await server.cli<{ revoked: number }>("keys", "revoke", key);
    expect(revoked.json.revoked).toBe(1);
    await expectError(await api(server, `/api/v1/promptruns/${UNKNOWN_UUID}`, { key }), 401);
  });
});

describe("hostile input keeps the server serving", () => {
  test("garbage of many kinds gets a JSON error, never a 5xx", async () => {
    const attempts: Array<[string, RequestInit]> = [
      [
        "/api/v1/prompts/greet/latest/runs",
        { method: "POST", headers: { "content-type": "application/json" }, body: "\u0000\u0001" },
      ],
      [
        "/api/v1/prompts/greet/latest/runs",
        { method: "POST", headers: { "content-type": "application/json" }, body: "" },
      ],
      [
        "/api/v1/prompts/greet/latest/runs",
        { method: "POST", headers: { "content-type": "application/json" }, body: "1e999999" },
      ],
      [
        `/api/v1/prompts/${"a".repeat(5000)}/latest/runs`,
        { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
      ],
      ["/api/v1/promptruns/%", { method: "GET" }],
      ["/api/v1/promptruns/../../etc/passwd", { method: "GET" }],
      ["/api/v1//promptruns", { method: "GET" }],
    ];
    for (const [path, init] of attempts) {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${server.apiKey}`);
      const response = await fetch(`${server.url}${path}`, { ...init, headers });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      const body = (await response.json()) as { error: string };
      expect(typeof body.error).toBe("string");
      expect(JSON.stringify(body)).not.toContain("    at ");
    }
    const unicode = await createRun({ inputs: { name: "名前 🚀 \u202e" } });
    expect(unicode.status).toBe(202);
    // A lone surrogate escape cannot be stored as UTF-8: refused with a clear error.
    const surrogate = await fetch(`${server.url}/api/v1/prompts/greet/latest/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: '{"inputs":{"name":"\\ud800"}}',
    });
    await expectError(surrogate, 400);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
