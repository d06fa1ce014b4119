/**
 * `client.prompts` against a real in-process Promptrun: list/summary/versions/push, and `get`
 * with its stale-while-revalidate cache (conditional requests answered 304 by the real server)
 * and its fallback when the server is stopped.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ApiError, createPromptrunClient, type PromptCacheOptions } from "@promptrun/client";
import type { PromptFileInput } from "@promptrun/contract";
import type { TestPromptrun } from "./start-promptrun.ts";
import { startTestPromptrun } from "./test-support/start-test-promptrun.ts";

let promptrun: TestPromptrun;
/** Every GET of a version the client sent: its If-None-Match and the status it got. */
let exchanges: Array<{ path: string; ifNoneMatch: string | null; status: number }>;
let clock: number;

const file = (slug: string, text: string, extra: Partial<PromptFileInput> = {}): PromptFileInput => ({
  slug,
  model: "dev:echo",
  messages: [{ role: "user", content: text }],
  ...extra,
});

const clientWith = (promptCache?: PromptCacheOptions) =>
  createPromptrunClient({
    baseUrl: promptrun.url,
    apiKey: promptrun.apiKey,
    ...(promptCache ? { promptCache: { now: () => clock, ...promptCache } } : {}),
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const path = new URL(String(input)).pathname;
      const headers = new Headers(init?.headers);
      exchanges.push({ path, ifNoneMatch: headers.get("if-none-match"), status: response.status });
      return response;
    },
  });

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error("condition not met within 5 s");
    await Bun.sleep(10);
  }
}

beforeEach(async () => {
  ({ promptrun } = await startTestPromptrun());
  exchanges = [];
  clock = 1_000_000;
});
afterEach(() => promptrun.stop());

describe("client.prompts", () => {
  test("push (created, then not), list with q and tag across pages, summary, versions", async () => {
    const client = clientWith();
    const first = await client.prompts.push(
      file("greet", "Hello", { description: "Says hi", tags: ["live"] }),
    );
    expect(first).toMatchObject({ slug: "greet", version: 1, created: true, tags: ["live"] });
    expect(
      await client.prompts.push(file("greet", "Hello", { description: "Says hi", tags: ["live"] })),
    ).toEqual({
      ...first,
      created: false,
    });
    await client.prompts.push(file("greet", "Hello again"));
    await client.prompts.push(file("farewell", "Bye"));

    const all = await client.prompts.list({ limit: 2 });
    expect(all.items.map((item) => item.slug)).toEqual(["chat", "farewell"]);
    const rest = await client.prompts.list({ limit: 2, cursor: all.nextCursor });
    expect(rest.items.map((item) => item.slug)).toEqual(["greet"]);
    expect(rest.nextCursor).toBeNull();
    expect((await client.prompts.list({ q: "FAREW" })).items.map((item) => item.slug)).toEqual(["farewell"]);
    expect((await client.prompts.list({ tag: "live" })).items.map((item) => item.slug)).toEqual(["greet"]);

    expect(await client.prompts.summary("greet")).toMatchObject({ latestVersion: 2, tags: { live: 1 } });
    const versions = await client.prompts.versions("greet", { limit: 1 });
    expect(versions.items.map((item) => item.version)).toEqual([2]);
    const older = await client.prompts.versions("greet", { limit: 1, cursor: versions.nextCursor });
    expect(older.items.map((item) => item.version)).toEqual([1]);

    const missing = await client.prompts.summary("nope").catch((error: unknown) => error);
    expect(ApiError.isInstance(missing) && missing.code).toBe("not_found");
    const invalid = await client.prompts.push(file("Bad Slug", "x")).catch((error: unknown) => error);
    expect(ApiError.isInstance(invalid) && invalid.status).toBe(400);
  });

  test("get by version, tag and latest; without a cache every call asks the server", async () => {
    const client = clientWith();
    await client.prompts.push(file("greet", "one", { tags: ["stable"] }));
    await client.prompts.push(file("greet", "two"));
    expect((await client.prompts.get("greet")).version).toBe(2);
    expect((await client.prompts.get("greet", { version: 1 })).messages[0]?.content).toBe("one");
    expect((await client.prompts.get("greet", { tag: "stable" })).version).toBe(1);
    expect((await client.prompts.get("greet", { tag: "stable" })).version).toBe(1);
    expect(exchanges.filter((exchange) => exchange.path.startsWith("/api/v1/prompts/greet/"))).toHaveLength(
      4,
    );
    expect(() => client.prompts.get("greet", { version: 1, tag: "stable" })).toThrow(TypeError);
  });

  test("the cache: fresh within cacheTtlMs, then served stale while a 304 revalidates, then a new version", async () => {
    const client = clientWith({ cacheTtlMs: 1_000, staleTtlMs: 10_000 });
    await client.prompts.push(file("greet", "one"));
    const first = await client.prompts.get("greet");
    expect(exchanges.at(-1)).toMatchObject({
      path: "/api/v1/prompts/greet/latest",
      ifNoneMatch: null,
      status: 200,
    });

    clock += 500;
    expect(await client.prompts.get("greet")).toEqual(first);
    expect(exchanges.filter((exchange) => exchange.path === "/api/v1/prompts/greet/latest")).toHaveLength(1);

    // Stale: served at once, one background request with the ETag, answered 304.
    clock += 1_000;
    const sent = exchanges.length;
    expect(await client.prompts.get("greet")).toEqual(first);
    expect(await client.prompts.get("greet")).toEqual(first);
    await until(() => exchanges.length > sent);
    expect(exchanges.slice(sent)).toEqual([
      { path: "/api/v1/prompts/greet/latest", ifNoneMatch: `"${first.contentHash}"`, status: 304 },
    ]);
    // The 304 renewed the entry: fresh again.
    clock += 500;
    await client.prompts.get("greet");
    expect(exchanges).toHaveLength(sent + 1);

    // A new version: the next revalidation (stale) brings it in the background.
    await client.prompts.push(file("greet", "two"));
    clock += 1_000;
    expect((await client.prompts.get("greet")).version).toBe(1);
    await until(() => exchanges.at(-1)?.status === 200);
    expect((await client.prompts.get("greet")).version).toBe(2);

    // Expired (past ttl + stale): asked before answering.
    clock += 20_000;
    const before = exchanges.length;
    expect((await client.prompts.get("greet")).version).toBe(2);
    expect(exchanges.slice(before)).toEqual([
      { path: "/api/v1/prompts/greet/latest", ifNoneMatch: expect.stringMatching(/^"/), status: 304 },
    ]);
  });

  test("a stopped server: the fallback without a cached copy, the cached copy (even expired) otherwise", async () => {
    const client = clientWith({ cacheTtlMs: 1_000, staleTtlMs: 1_000 });
    await client.prompts.push(file("greet", "one"));
    const cached = await client.prompts.get("greet");
    const fallback = { ...cached, id: "00000000-0000-4000-8000-000000000001", version: 99 };
    await promptrun.stop();

    clock += 60_000;
    expect(await client.prompts.get("greet", { fallback })).toEqual(cached);
    expect(await client.prompts.get("greet", { version: 1, fallback })).toEqual(fallback);
    const failure = await client.prompts.get("greet", { version: 1 }).catch((error: unknown) => error);
    expect(ApiError.isInstance(failure) && failure.code).toBe("network");
    // Without a cache the fallback answers too.
    expect(await clientWith().prompts.get("greet", { fallback })).toEqual(fallback);
  });

  test("a real answer (404, 401) is thrown, never replaced by the fallback", async () => {
    const client = clientWith({ cacheTtlMs: 1_000 });
    await client.prompts.push(file("greet", "one"));
    const fallback = await client.prompts.get("greet");
    const missing = await client.prompts.get("nope", { fallback }).catch((error: unknown) => error);
    expect(ApiError.isInstance(missing) && missing.status).toBe(404);
    const wrongKey = createPromptrunClient({ baseUrl: promptrun.url, apiKey: "pr_wrong" });
    const unauthorized = await wrongKey.prompts.get("greet", { fallback }).catch((error: unknown) => error);
    expect(ApiError.isInstance(unauthorized) && unauthorized.status).toBe(401);
  });
});
