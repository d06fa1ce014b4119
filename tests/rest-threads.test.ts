/**
 * GET and POST /api/v1/threads/{thread}/messages over a real server, on SQLite or Postgres
 * (PROMPTRUN_E2E_DATABASE): paging oldest first, an import repeated three times adds each message
 * once, a run afterwards carries the imported history (dev:echo's memory counts), other tenants see
 * nothing, 400/401/403/404/405/415, every response checked against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

interface Message {
  runId: string | null;
  channel: string;
  role: string;
  content: string;
  externalId?: string;
  createdAt: string;
}
interface Page {
  items: Message[];
  nextCursor: string | null;
}

const PATH = "/api/v1/threads/{thread}/messages";
let server: TestServer;
let other: { url: string; apiKey: string };
let inactive: { url: string; apiKey: string };
let document: OpenApiDocumentJson;

beforeAll(async () => {
  server = await startServer();
  const created = await server.cli<{ apiKey: string }>("tenants", "create", "other");
  other = { url: server.url, apiKey: created.json.apiKey };
  const lapsed = await server.cli<{ apiKey: string }>("tenants", "create", "lapsed", "--inactive");
  inactive = { url: server.url, apiKey: lapsed.json.apiKey };
  const dir = `${server.dataDir}/prompts-chat`;
  await Bun.write(
    `${dir}/chat.yaml`,
    'slug: chat\nmodel: dev:echo\ninputs: { message: { type: string } }\nmessages:\n  - { role: user, content: "{{message}}" }\n',
  );
  const pushed = await server.cli("prompts", "push", dir, "--tenant", server.tenantId);
  if (pushed.code !== 0) throw new Error(pushed.stderr);
  document = await fetchOpenApiDocument(server.url);
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});

const validate = (method: "get" | "post", status: number, body: unknown) => {
  const check = responseValidator(document, PATH, method, String(status));
  expect(check(body) ? [] : check.errors).toEqual([]);
};
const messagesOf = (thread: string) => `/api/v1/threads/${thread}/messages`;

const read = async (thread: string, query = "", owner = { url: server.url, apiKey: server.apiKey }) => {
  const response = await api(owner, `${messagesOf(thread)}${query}`);
  const body = (await response.json()) as Page;
  expect(response.status).toBe(200);
  validate("get", 200, body);
  return body;
};
const importInto = async (
  thread: string,
  json: unknown,
  owner = { url: server.url, apiKey: server.apiKey },
) => {
  const response = await api(owner, messagesOf(thread), { method: "POST", json });
  const body = await response.json();
  validate("post", response.status, body);
  return { status: response.status, body };
};
const expect400 = async (thread: string, json: unknown, field: string) => {
  const { status, body } = await importInto(thread, json);
  expect(status).toBe(400);
  expect((body as { error: string }).error).toContain(field);
};

const history = Array.from({ length: 6 }, (_, index) => ({
  role: index % 2 === 0 ? "user" : "assistant",
  content: `old ${index}`,
  externalId: `ext-${index}`,
  createdAt: `2026-01-01T00:00:0${index}Z`,
}));

describe("thread messages over REST", () => {
  test("an import repeated three times adds each message once; pages read oldest first", async () => {
    const thread = crypto.randomUUID();
    const results = [];
    for (let round = 0; round < 3; round++) results.push(await importInto(thread, { messages: history }));
    expect(results).toEqual([
      { status: 201, body: { imported: 6, skipped: 0 } },
      { status: 201, body: { imported: 0, skipped: 6 } },
      { status: 201, body: { imported: 0, skipped: 6 } },
    ]);
    const first = await read(thread, "?limit=4");
    expect(first.items.map((message) => message.content)).toEqual(["old 0", "old 1", "old 2", "old 3"]);
    expect(first.items[0]).toEqual({
      runId: null,
      channel: "default",
      role: "user",
      content: "old 0",
      externalId: "ext-0",
      createdAt: "2026-01-01T00:00:00.000Z",
    });
    expect(first.nextCursor).not.toBeNull();
    const second = await read(thread, `?limit=4&cursor=${first.nextCursor}`);
    expect(second).toMatchObject({ items: [{ content: "old 4" }, { content: "old 5" }], nextCursor: null });
    // Another channel is separate.
    expect((await read(thread, "?channel=support")).items).toEqual([]);
  });

  test("a run afterwards carries the imported history, then appends its exchange", async () => {
    const thread = crypto.randomUUID();
    expect((await importInto(thread, { messages: history })).status).toBe(201);
    const response = await api(server, "/api/v1/prompts/chat/latest/runs", {
      method: "POST",
      json: { thread, inputs: { message: "new" } },
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const run = await waitForRun(server, id);
    expect(run).toMatchObject({ status: "completed", memory: { messages: 6, dropped: 0 } });
    const page = await read(thread);
    expect(page.items.map((message) => [message.runId, message.content])).toEqual([
      ...history.map((message) => [null, message.content]),
      [id, "new"],
      [id, "new"],
    ]);
  });

  test("another tenant's thread is invisible; its import lands in its own thread", async () => {
    const thread = crypto.randomUUID();
    await importInto(thread, { messages: history });
    expect(await read(thread, "", other)).toEqual({ items: [], nextCursor: null });
    expect((await importInto(thread, { messages: history.slice(0, 1) }, other)).body).toEqual({
      imported: 1,
      skipped: 0,
    });
    expect((await read(thread)).items).toHaveLength(6);
    expect(await read(crypto.randomUUID())).toEqual({ items: [], nextCursor: null });
  });

  test("400 names the field: bad role, 1,001 messages, none, bad createdAt, bad cursor or limit", async () => {
    const thread = crypto.randomUUID();
    await expect400(thread, { messages: [{ role: "system", content: "x" }] }, "messages[0].role");
    const many = Array.from({ length: 1001 }, () => ({ role: "user", content: "x" }));
    await expect400(thread, { messages: many }, "messages");
    await expect400(thread, { messages: [] }, "messages");
    await expect400(
      thread,
      { messages: [{ role: "user", content: "x", createdAt: "yesterday" }] },
      "createdAt",
    );
    await expect400(thread, { messages: [{ role: "user", content: "x" }], extra: 1 }, "extra");
    expect(await read(thread)).toEqual({ items: [], nextCursor: null });
    for (const query of ["?cursor=garbage", "?limit=201", "?limit=0", "?channel=", "?unknown=1"]) {
      const response = await api(server, `${messagesOf(thread)}${query}`);
      expect(response.status).toBe(400);
      validate("get", 400, await response.json());
    }
  });

  test("404 malformed thread, 401, 403 without a subscription (reading allowed), 415, 405", async () => {
    const malformed = await api(server, messagesOf("not-a-uuid"));
    expect(malformed.status).toBe(404);
    validate("get", 404, await malformed.json());
    for (const method of ["GET", "POST"] as const) {
      const response = await api(server, messagesOf(crypto.randomUUID()), {
        method,
        key: null,
        ...(method === "POST" ? { json: { messages: history } } : {}),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      validate(method === "GET" ? "get" : "post", 401, await response.json());
    }
    const forbidden = await importInto(crypto.randomUUID(), { messages: history }, inactive);
    expect(forbidden.status).toBe(403);
    expect(await read(crypto.randomUUID(), "", inactive)).toEqual({ items: [], nextCursor: null });
    const plain = await fetch(`${server.url}${messagesOf(crypto.randomUUID())}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "text/plain" },
      body: JSON.stringify({ messages: history }),
    });
    expect(plain.status).toBe(415);
    validate("post", 415, await plain.json());
    const put = await api(server, messagesOf(crypto.randomUUID()), { method: "PUT", json: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
  });
});
