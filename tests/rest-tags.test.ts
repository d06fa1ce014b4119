/**
 * Tag moves over REST against a real server (SQLite, or Postgres with
 * PROMPTRUN_E2E_DATABASE=postgres): a move, the expectedVersion guard (stale number, null on an
 * existing tag), concurrent guarded moves with one winner, delete, a run by tag after a move,
 * tag history with movedBy from REST (key prefix), tRPC and the CLI, tenant isolation,
 * 400/401/403/404/405; every answer checked against the served OpenAPI
 * document. docs/PRODUCT-RULES.md "Prompts over REST".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer } from "./support/server.ts";

type Tenant = { url: string; apiKey: string };
const PATH = "/api/v1/prompts/{slug}/tags/{tag}";
let server: TestServer;
let document: OpenApiDocumentJson;
let writer: Tenant;
let other: Tenant;
let lapsed: Tenant;
let writerId: string;

const tenantIds = new Map<string, string>();
const createTenant = async (name: string, ...flags: string[]): Promise<Tenant> => {
  const created = await server.cli<{ apiKey: string; tenant: { id: string } }>(
    "tenants",
    "create",
    name,
    ...flags,
  );
  tenantIds.set(created.json.apiKey, created.json.tenant.id);
  return { url: server.url, apiKey: created.json.apiKey };
};

async function documented<T = Record<string, unknown>>(
  response: Response,
  method: string,
  status: number,
): Promise<T> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as T;
  const validate = responseValidator(document, PATH, method, String(status));
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  return body;
}

const file = (slug: string, text: string, tags: string[] = []) => ({
  slug,
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [{ role: "user", content: `${text} {{name}}` }],
  tags,
});

const put = (slug: string, tag: string, body: unknown, tenant: Tenant = writer) =>
  api(tenant, `/api/v1/prompts/${slug}/tags/${tag}`, { method: "PUT", json: body });
const tagsOf = async (slug: string, tenant: Tenant = writer) =>
  ((await (await api(tenant, `/api/v1/prompts/${slug}`)).json()) as { tags: Record<string, number> }).tags;

beforeAll(async () => {
  server = await startServer();
  document = await fetchOpenApiDocument(server.url);
  [writer, other, lapsed] = await Promise.all([
    createTenant("writer"),
    createTenant("other"),
    createTenant("lapsed", "--inactive"),
  ]);
  writerId = tenantIds.get(writer.apiKey) ?? "";
  for (const [slug, text, tags] of [
    ["greet", "one", ["production"]],
    ["greet", "two", []],
    ["greet", "three", []],
    ["race", "a", ["production"]],
    ["race", "b", []],
    ["race", "c", []],
  ] as const) {
    const pushed = await api(writer, "/api/v1/prompts", {
      method: "POST",
      json: file(slug, text, [...tags]),
    });
    expect(pushed.status).toBe(201);
  }
  expect(
    (await api(other, "/api/v1/prompts", { method: "POST", json: file("greet", "theirs", ["production"]) }))
      .status,
  ).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.dispose();
});

describe("PUT /api/v1/prompts/{slug}/tags/{tag}", () => {
  test("moves a tag; a run by the tag executes the new version; the other tenant is untouched", async () => {
    const moved = await documented(
      await put("greet", "production", { version: 2, expectedVersion: 1 }),
      "put",
      200,
    );
    expect(moved).toEqual({ slug: "greet", tag: "production", version: 2, previousVersion: 1 });
    expect((await tagsOf("greet")).production).toBe(2);
    expect((await tagsOf("greet", other)).production).toBe(1);
    const run = await api(writer, "/api/v1/prompts/greet/production/runs", {
      method: "POST",
      json: { inputs: { name: "Ada" } },
    });
    expect(run.status).toBeLessThan(300);
    const { id } = (await run.json()) as { id: string };
    const fetched = (await (await api(writer, `/api/v1/promptruns/${id}`)).json()) as {
      prompt: { version: number };
    };
    expect(fetched.prompt.version).toBe(2);
  });

  test("a stale expectedVersion is a 409 that says where the tag points", async () => {
    const current = (await tagsOf("greet")).production;
    const stale = await documented<{ error: string }>(
      await put("greet", "production", { version: 3, expectedVersion: 99 }),
      "put",
      409,
    );
    expect(stale.error).toContain(`points at version ${current}`);
    expect((await tagsOf("greet")).production).toBe(current);
  });

  test("expectedVersion null creates a new tag, and is a 409 once it exists", async () => {
    const created = await documented(
      await put("greet", "canary", { version: 3, expectedVersion: null }),
      "put",
      200,
    );
    expect(created.previousVersion).toBeNull();
    await documented(await put("greet", "canary", { version: 1, expectedVersion: null }), "put", 409);
    expect((await tagsOf("greet")).canary).toBe(3);
  });

  test("concurrent PUTs with the same expectedVersion: exactly one wins", async () => {
    const responses = await Promise.all(
      [2, 3, 2, 3].map((version) => put("race", "production", { version, expectedVersion: 1 })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409, 409]);
  });

  test("400 for latest, a version-number tag or a bad body; 404 unknown slug, version or other tenant's prompt", async () => {
    await documented(await put("greet", "latest", { version: 1 }), "put", 400);
    await documented(await put("greet", "7", { version: 1 }), "put", 400);
    const bad = await documented<{ error: string }>(await put("greet", "x", { version: "one" }), "put", 400);
    expect(bad.error).toContain("version");
    await documented(await put("greet", "x", { version: 1, extra: true }), "put", 400);
    await documented(await put("nope", "x", { version: 1 }), "put", 404);
    await documented(await put("greet", "x", { version: 9 }), "put", 404);
    await documented(await put("race", "x", { version: 1 }, other), "put", 404);
    expect((await tagsOf("race")).x).toBeUndefined();
  });

  test("401 with WWW-Authenticate, 403 without a subscription, 415", async () => {
    const noKey = await api(writer, "/api/v1/prompts/greet/tags/x", {
      method: "PUT",
      json: { version: 1 },
      key: null,
    });
    await documented(noKey, "put", 401);
    expect(noKey.headers.get("www-authenticate")).toContain("Bearer");
    await documented(await put("greet", "x", { version: 1 }, lapsed), "put", 403);
    const text = await api(writer, "/api/v1/prompts/greet/tags/x", {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ version: 1 }),
    });
    await documented(text, "put", 415);
  });
});

describe("DELETE /api/v1/prompts/{slug}/tags/{tag}", () => {
  const del = (slug: string, tag: string, tenant: Tenant = writer) =>
    api(tenant, `/api/v1/prompts/${slug}/tags/${tag}`, { method: "DELETE" });

  test("204, then the tag is gone and a run by it is a 404; 404 for an unknown tag", async () => {
    await documented(await put("greet", "doomed", { version: 1 }), "put", 200);
    await documented(await del("greet", "doomed", other), "delete", 404);
    await documented(await del("greet", "doomed", lapsed), "delete", 403);
    const gone = await del("greet", "doomed");
    expect(gone.status).toBe(204);
    expect((await tagsOf("greet")).doomed).toBeUndefined();
    await documented(await del("greet", "doomed"), "delete", 404);
    const run = await api(writer, "/api/v1/prompts/greet/doomed/runs", {
      method: "POST",
      json: { inputs: { name: "x" } },
    });
    expect(run.status).toBe(404);
    await documented(await del("greet", "latest"), "delete", 400);
    await documented(
      await api(writer, "/api/v1/prompts/greet/tags/x", { method: "DELETE", key: null }),
      "delete",
      401,
    );
  });

  test("405 with Allow on the tag path", async () => {
    const response = await api(writer, "/api/v1/prompts/greet/tags/production", { method: "GET" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("PUT, DELETE");
  });
});

interface Move {
  version: number | null;
  previousVersion: number | null;
  movedAt: string;
  movedBy: string;
}

describe("GET /api/v1/prompts/{slug}/tags/{tag}/history", () => {
  const HISTORY = "/api/v1/prompts/{slug}/tags/{tag}/history";
  const history = async (query = "", tenant: Tenant = writer) => {
    const response = await api(tenant, `/api/v1/prompts/hist/tags/live/history${query}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: Move[]; nextCursor: string | null };
    const validate = responseValidator(document, HISTORY, "get", "200");
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    return body;
  };

  test("moves from a push, REST, tRPC, the CLI and a delete, newest first, with who moved them", async () => {
    for (const text of ["h1", "h2", "h3"]) {
      const tags = text === "h1" ? ["live"] : [];
      expect(
        (await api(writer, "/api/v1/prompts", { method: "POST", json: file("hist", text, tags) })).status,
      ).toBe(201);
    }
    expect((await put("hist", "live", { version: 2, expectedVersion: 1 })).status).toBe(200);
    const trpc = await fetch(`${server.url}/trpc/prompt.tag`, {
      method: "POST",
      headers: { authorization: `Bearer ${writer.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ slug: "hist", version: "3", tag: "live", expectedVersion: 2 }),
    });
    expect(trpc.status).toBe(200);
    const cli = await server.cli("prompts", "tag", "hist", "1", "live", "--tenant", writerId);
    expect(cli.code).toBe(0);
    expect((await api(writer, "/api/v1/prompts/hist/tags/live", { method: "DELETE" })).status).toBe(204);

    const { items, nextCursor } = await history();
    expect(nextCursor).toBeNull();
    expect(items.map((move) => [move.version, move.previousVersion])).toEqual([
      [null, 1],
      [1, 3],
      [3, 2],
      [2, 1],
      [1, null],
    ]);
    const prefix = items[0]?.movedBy ?? "";
    expect(prefix).not.toBe("cli");
    expect(writer.apiKey.startsWith(prefix)).toBe(true);
    // A REST push records its key like any REST call; the CLI records `cli`.
    expect(items.map((move) => move.movedBy)).toEqual([prefix, "cli", prefix, prefix, prefix]);
    const times = items.map((move) => Date.parse(move.movedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  test("pages with limit and cursor; 400 for a bad limit or cursor; other tenant and unknown slug 404", async () => {
    const first = await history("?limit=2");
    expect(first.items).toHaveLength(2);
    const second = await history(`?limit=2&cursor=${first.nextCursor}`);
    expect(second.items[0]).not.toEqual(first.items[1]);
    expect((await api(writer, "/api/v1/prompts/hist/tags/live/history?limit=201")).status).toBe(400);
    expect((await api(writer, "/api/v1/prompts/hist/tags/live/history?cursor=nope")).status).toBe(400);
    expect((await api(writer, "/api/v1/prompts/hist/tags/latest/history")).status).toBe(400);
    expect((await api(other, "/api/v1/prompts/hist/tags/live/history")).status).toBe(404);
    expect((await api(writer, "/api/v1/prompts/nope/tags/live/history")).status).toBe(404);
    const theirs = await api(other, "/api/v1/prompts/greet/tags/production/history");
    const moves = ((await theirs.json()) as { items: Move[] }).items;
    expect(moves.map((move) => move.version)).toEqual([1]);
    const lapsedRead = await api(lapsed, "/api/v1/prompts/nope/tags/live/history");
    expect(lapsedRead.status).toBe(404);
    const noKey = await api(writer, "/api/v1/prompts/hist/tags/live/history", { key: null });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get("www-authenticate")).toContain("Bearer");
    expect(
      (await api(writer, "/api/v1/prompts/hist/tags/live/history", { method: "POST" })).headers.get("allow"),
    ).toBe("GET, HEAD");
  });
});
