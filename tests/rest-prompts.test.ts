/**
 * The prompt routes over REST against a real server (SQLite, or Postgres with
 * PROMPTRUN_E2E_DATABASE=postgres): list with q/tag across pages, summaries, versions, a version by
 * number/tag/latest/id with ETag and 304, push (201, then 200 for identical content, 400 naming
 * the field, 403, 409 quota), tenant isolation, 401 and 405; every answer checked against the
 * served OpenAPI document. docs/PRODUCT-RULES.md "Prompts over REST".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer } from "./support/server.ts";

const QUOTA = 12;
let server: TestServer;
let document: OpenApiDocumentJson;
/** A tenant of its own, so its list holds only what this file pushes. */
let writer: { url: string; apiKey: string };
let other: { url: string; apiKey: string };
let lapsed: { url: string; apiKey: string };

type Tenant = { url: string; apiKey: string };
const createTenant = async (name: string, ...flags: string[]): Promise<Tenant> => {
  const created = await server.cli<{ apiKey: string }>("tenants", "create", name, ...flags);
  return { url: server.url, apiKey: created.json.apiKey };
};

/** The body of an answer, checked against the document's schema for this operation and status. */
async function documented<T = Record<string, unknown>>(
  response: Response,
  path: string,
  method: string,
  status: number,
): Promise<T> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as T;
  const validate = responseValidator(document, path, method, String(status));
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  return body;
}

const file = (slug: string, text: string, extra: Record<string, unknown> = {}) => ({
  slug,
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [{ role: "user", content: `${text} {{name}}` }],
  ...extra,
});

const push = (body: unknown, tenant: Tenant = writer) =>
  api(tenant, "/api/v1/prompts", { method: "POST", json: body });

interface Summary {
  slug: string;
  description: string | null;
  latestVersion: number;
  tags: Record<string, number>;
}
interface Version {
  id: string;
  slug: string;
  version: number;
  contentHash: string;
  tags: string[];
  messages: Array<{ content: string }>;
  description: string | null;
}
interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_MAX_PROMPT_VERSIONS: String(QUOTA) } });
  document = await fetchOpenApiDocument(server.url);
  [writer, other, lapsed] = await Promise.all([
    createTenant("writer"),
    createTenant("other"),
    createTenant("lapsed", "--inactive"),
  ]);
  const files = [
    file("alpha-search", "a", { description: "Finds THINGS in 100%_of cases", tags: ["live"] }),
    file("beta", "b", { description: "Plain words" }),
    file("gamma_1", "g", { tags: ["live"] }),
    file("delta", "d1", { tags: ["stable"] }),
    file("delta", "d2"),
    file("delta", "d3", { description: "Third", tags: ["beta-tag"] }),
  ];
  for (const body of files) expect((await push(body)).status).toBe(201);
  expect((await push(file("alpha-secret", "x", { description: "things" }), other)).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.dispose();
});

describe("GET /api/v1/prompts", () => {
  const list = async (query: string, tenant: Tenant = writer) =>
    documented<Page<Summary>>(await api(tenant, `/api/v1/prompts${query}`), "/api/v1/prompts", "get", 200);

  test("summaries in slug order with description, latest version and tags", async () => {
    const page = await list("");
    expect(page.items.map((item) => item.slug)).toEqual(["alpha-search", "beta", "delta", "gamma_1"]);
    expect(page.nextCursor).toBeNull();
    expect(page.items.find((item) => item.slug === "delta")).toMatchObject({
      description: "Third",
      latestVersion: 3,
      tags: { stable: 1, "beta-tag": 3 },
    });
    expect(page.items.find((item) => item.slug === "gamma_1")?.description).toBeNull();
  });

  test("q matches slug or description case-insensitively; wildcards are literal; tag filters", async () => {
    const slugs = async (query: string) => (await list(query)).items.map((item) => item.slug);
    expect(await slugs("?q=THINGS")).toEqual(["alpha-search"]);
    expect(await slugs("?q=ta")).toEqual(["beta", "delta"]);
    expect(await slugs("?q=third")).toEqual(["delta"]);
    expect(await slugs(`?q=${encodeURIComponent("%_of")}`)).toEqual(["alpha-search"]);
    expect(await slugs("?q=_")).toEqual(["alpha-search", "gamma_1"]);
    expect(await slugs(`?q=${encodeURIComponent("0%c")}`)).toEqual([]);
    expect(await slugs("?tag=live")).toEqual(["alpha-search", "gamma_1"]);
    expect(await slugs("?tag=live&q=gamma")).toEqual(["gamma_1"]);
    expect(await slugs("?tag=nope")).toEqual([]);
  });

  test("pages across the list with limit and nextCursor, filters kept", async () => {
    const seen: string[] = [];
    let query = "?limit=1&q=a";
    for (let pages = 0; pages < 10; pages++) {
      const page = await list(query);
      seen.push(...page.items.map((item) => item.slug));
      if (page.nextCursor === null) break;
      query = `?limit=1&q=a&cursor=${encodeURIComponent(page.nextCursor)}`;
    }
    expect(seen).toEqual(["alpha-search", "beta", "delta", "gamma_1"]);
    const two = await list("?limit=2&tag=live");
    expect(two.items).toHaveLength(2);
  });

  test("400 naming the parameter: limit out of range or not a number, unknown or repeated names, bad cursor", async () => {
    const bad = async (query: string, part: string) => {
      const body = await documented<{ error: string }>(
        await api(writer, `/api/v1/prompts${query}`),
        "/api/v1/prompts",
        "get",
        400,
      );
      expect(body.error).toContain(part);
    };
    await bad("?limit=0", "limit");
    await bad("?limit=201", "limit");
    await bad("?limit=abc", "limit");
    await bad("?limit=1.5", "limit");
    await bad("?sort=slug", "sort");
    await bad("?q=a&q=b", "q");
    await bad("?q=", "q");
    await bad("?cursor=not-a-cursor", "cursor");
    await bad("?tag=has%20space", "tag");
  });

  test("another tenant sees only its own prompts; reading needs no subscription", async () => {
    expect((await list("", other)).items.map((item) => item.slug)).toEqual(["alpha-secret"]);
    expect((await list("?q=alpha")).items.map((item) => item.slug)).toEqual(["alpha-search"]);
    expect((await list("", lapsed)).items).toEqual([]);
  });
});

describe("GET /api/v1/prompts/{slug} and /versions", () => {
  test("one summary; 404 for unknown, malformed, and another tenant's slugs", async () => {
    const summary = await documented<Summary>(
      await api(writer, "/api/v1/prompts/delta"),
      "/api/v1/prompts/{slug}",
      "get",
      200,
    );
    expect(summary).toMatchObject({ slug: "delta", latestVersion: 3, tags: { stable: 1, "beta-tag": 3 } });
    for (const [tenant, slug] of [
      [writer, "nope"],
      [writer, "Not%20A%20Slug"],
      [other, "delta"],
      [writer, "alpha-secret"],
    ] as const) {
      await documented(await api(tenant, `/api/v1/prompts/${slug}`), "/api/v1/prompts/{slug}", "get", 404);
    }
  });

  test("versions newest first, across pages; 404 unknown or another tenant's; 400 bad page", async () => {
    const path = "/api/v1/prompts/{slug}/versions";
    const first = await documented<Page<Version>>(
      await api(writer, "/api/v1/prompts/delta/versions?limit=2"),
      path,
      "get",
      200,
    );
    expect(first.items.map((item) => item.version)).toEqual([3, 2]);
    expect(first.items[0]?.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.items[0]?.tags).toEqual(["beta-tag"]);
    const cursor = encodeURIComponent(first.nextCursor ?? "");
    const rest = await documented<Page<Version>>(
      await api(writer, `/api/v1/prompts/delta/versions?limit=2&cursor=${cursor}`),
      path,
      "get",
      200,
    );
    expect(rest.items.map((item) => item.version)).toEqual([1]);
    expect(rest.nextCursor).toBeNull();
    await documented(await api(other, "/api/v1/prompts/delta/versions"), path, "get", 404);
    await documented(await api(writer, "/api/v1/prompts/nope/versions"), path, "get", 404);
    await documented(await api(writer, "/api/v1/prompts/delta/versions?limit=500"), path, "get", 400);
    await documented(await api(writer, "/api/v1/prompts/delta/versions?cursor=xyz"), path, "get", 400);
    await documented(await api(writer, "/api/v1/prompts/delta/versions?q=x"), path, "get", 400);
  });
});

describe("GET /api/v1/prompts/{slug}/{version}", () => {
  const path = "/api/v1/prompts/{slug}/{version}";
  const get = async (segment: string, tenant: Tenant = writer) =>
    documented<Version>(await api(tenant, `/api/v1/prompts/delta/${segment}`), path, "get", 200);

  test("by number, tag, latest and id: the whole version", async () => {
    const one = await get("1");
    expect(one).toMatchObject({ slug: "delta", version: 1, tags: ["stable"], description: null });
    expect(one.messages[0]?.content).toBe("d1 {{name}}");
    expect(await get("stable")).toEqual(one);
    expect(await get(one.id)).toEqual(one);
    expect((await get("latest")).version).toBe(3);
    expect((await get("beta-tag")).description).toBe("Third");
    const whole = (await get("2")) as unknown as Record<string, unknown>;
    for (const field of ["model", "params", "inputs", "messages", "output", "memory", "providerOptions"])
      expect(Object.keys(whole)).toContain(field);
    expect(whole.inputs).toEqual({ name: { type: "string" } });
  });

  test("404 for an unknown version, tag, id, a malformed segment, and another tenant's prompt", async () => {
    const one = await get("1");
    for (const [tenant, slug, segment] of [
      [writer, "delta", "9"],
      [writer, "delta", "no-such-tag"],
      [writer, "delta", "00000000-0000-4000-8000-000000000000"],
      [writer, "delta", "01"],
      [writer, "beta", one.id],
      [other, "delta", "1"],
      [other, "delta", one.id],
    ] as const) {
      await documented(await api(tenant, `/api/v1/prompts/${slug}/${segment}`), path, "get", 404);
    }
  });

  test("ETag is the quoted contentHash; If-None-Match with it (a list, W/, or *) is 304 without a body", async () => {
    const response = await api(writer, "/api/v1/prompts/delta/1");
    const version = await documented<Version>(response, path, "get", 200);
    const etag = `"${version.contentHash}"`;
    expect(response.headers.get("etag")).toBe(etag);
    for (const ifNoneMatch of [etag, `"other", ${etag}`, `W/${etag}`, "*"]) {
      const notModified = await api(writer, "/api/v1/prompts/delta/stable", {
        headers: { "if-none-match": ifNoneMatch },
      });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get("etag")).toBe(etag);
      expect(await notModified.text()).toBe("");
    }
    const changed = await api(writer, "/api/v1/prompts/delta/latest", { headers: { "if-none-match": etag } });
    expect((await documented<Version>(changed, path, "get", 200)).version).toBe(3);
    // 404 outranks a conditional request.
    const unknown = await api(writer, "/api/v1/prompts/delta/9", { headers: { "if-none-match": "*" } });
    expect(unknown.status).toBe(404);
  });

  test("a tag named `versions` is the versions list (the static segment wins)", async () => {
    const listed = await api(writer, "/api/v1/prompts/delta/versions");
    expect(((await listed.json()) as Page<Version>).items).toHaveLength(3);
  });
});

describe("POST /api/v1/prompts", () => {
  const path = "/api/v1/prompts";

  test("201 for a new version with Location; 200 created:false for identical content; the version reads back", async () => {
    const body = file("pushed", "hello", { description: "Pushed over REST", tags: ["v"] });
    const created = await push(body);
    const first = await documented<{ slug: string; version: number; id: string; created: boolean }>(
      created,
      path,
      "post",
      201,
    );
    expect(first).toMatchObject({ slug: "pushed", version: 1, tags: ["v"], created: true });
    expect(created.headers.get("location")).toBe("/api/v1/prompts/pushed/1");
    const again = await documented(await push(body), path, "post", 200);
    expect(again).toEqual({ ...first, created: false });
    const read = await documented<Version>(
      await api(writer, "/api/v1/prompts/pushed/v"),
      `${path}/{slug}/{version}`,
      "get",
      200,
    );
    expect(read).toMatchObject({ id: first.id, description: "Pushed over REST" });
  });

  test("400 names the bad field by its path; nothing is written", async () => {
    const bad = async (body: unknown, part: string) => {
      const answer = await documented<{ error: string }>(await push(body), path, "post", 400);
      expect(answer.error).toContain(part);
    };
    await bad({ ...file("broken", "x"), messages: [{ role: "robot", content: "x" }] }, "messages[0].role");
    await bad({ ...file("broken", "x"), inputs: { name: { type: "colour" } } }, "inputs.name.type");
    await bad({ ...file("broken", "x"), surprise: 1 }, "surprise");
    await bad(file("broken", "{{undeclared}}"), "undeclared");
    await bad({ ...file("broken", "x"), slug: "Bad Slug" }, "slug");
    await bad([file("broken", "x")], "object");
    const invalidJson = await api(writer, path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    await documented(invalidJson, path, "post", 400);
    await documented(await api(writer, "/api/v1/prompts/broken"), `${path}/{slug}`, "get", 404);
  });

  test("401, 403 without a subscription, 415, 413", async () => {
    const body = file("guarded", "x");
    const noKey = await api(writer, path, { method: "POST", json: body, key: null });
    await documented(noKey, path, "post", 401);
    expect(noKey.headers.get("www-authenticate")).toContain("Bearer");
    await documented(await push(body, lapsed), path, "post", 403);
    const text = await api(writer, path, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify(body),
    });
    await documented(text, path, "post", 415);
    const huge = { ...body, description: "x".repeat(2 * 1024 * 1024) };
    await documented(await push(huge), path, "post", 413);
    await documented(await api(writer, "/api/v1/prompts/guarded"), `${path}/{slug}`, "get", 404);
  });

  test("409 when the prompt-version quota is reached; an identical push still answers 200", async () => {
    const full = await createTenant("full");
    for (let index = 1; index <= QUOTA; index++)
      expect((await push(file("many", `v${index}`), full)).status).toBe(201);
    const over = await documented<{ error: string }>(
      await push(file("many", "one more"), full),
      path,
      "post",
      409,
    );
    expect(over.error).toContain("PROMPTRUN_MAX_PROMPT_VERSIONS");
    expect((await push(file("many", `v${QUOTA}`), full)).status).toBe(200);
  });
});

describe("auth and methods", () => {
  test("401 with WWW-Authenticate on every read without a valid key", async () => {
    for (const [url, path] of [
      ["/api/v1/prompts", "/api/v1/prompts"],
      ["/api/v1/prompts/delta", "/api/v1/prompts/{slug}"],
      ["/api/v1/prompts/delta/versions", "/api/v1/prompts/{slug}/versions"],
      ["/api/v1/prompts/delta/1", "/api/v1/prompts/{slug}/{version}"],
    ] as const) {
      for (const key of [null, "pr_not_a_real_key"]) {
        const response = await api(writer, url, { key });
        await documented(response, path, "get", 401);
        expect(response.headers.get("www-authenticate")).toContain("Bearer");
      }
    }
  });

  test("405 with Allow on a method a path does not accept", async () => {
    const cases = [
      ["DELETE", "/api/v1/prompts", "GET, HEAD, POST"],
      ["PUT", "/api/v1/prompts/delta", "GET, HEAD"],
      ["POST", "/api/v1/prompts/delta/versions", "GET, HEAD"],
      ["DELETE", "/api/v1/prompts/delta/1", "GET, HEAD"],
    ] as const;
    for (const [method, url, allow] of cases) {
      const response = await api(writer, url, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
      expect(((await response.json()) as { code: string }).code).toBe("method_not_allowed");
    }
  });
});
