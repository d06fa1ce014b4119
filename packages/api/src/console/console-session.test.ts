import { afterEach, describe, expect, test } from "bun:test";
import { type ConsoleTestServer, startConsoleTestServer } from "./console-test-server.ts";

const HOUR = 3600_000;
const CONSOLE = { "x-promptrun-console": "1" };

let server: ConsoleTestServer;
afterEach(async () => {
  await server?.close();
});

const slugsOf = async (response: Response): Promise<string[]> =>
  ((await response.json()) as { items: Array<{ slug: string }> }).items.map((item) => item.slug);

/** GET of a tRPC query (no batching), its input as `?input=`. */
const trpcQueryPath = (procedure: string, input: unknown) =>
  `/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`;

const trpcSlugs = async (response: Response): Promise<string[]> =>
  ((await response.json()) as { result: { data: { items: Array<{ slug: string }> } } }).result.data.items.map(
    (item) => item.slug,
  );

describe("POST /console/session", () => {
  test("an API key gets 200 {tenant} and an HttpOnly, SameSite=Strict session cookie on Path=/", async () => {
    server = await startConsoleTestServer();
    const { response, cookie } = await server.signIn(server.keys.a);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ tenant: { id: server.tenants.a, name: "tenant-a" } });
    const setCookie = response.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^promptrun_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(cookie).toBe(setCookie.split(";")[0]!);
    // The key itself is never in the answer or the cookie.
    expect(setCookie).not.toContain(server.keys.a);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  test("the cookie is Secure when the public URL is https", async () => {
    server = await startConsoleTestServer({ publicUrl: "https://promptrun.example.com" });
    const { response } = await server.signIn(server.keys.a);
    expect(response.headers.get("set-cookie")).toMatch(
      /^promptrun_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/,
    );
  });

  test("a wrong or malformed key is 401 with a clear message; a bad body 400; not JSON 415; another origin 403", async () => {
    server = await startConsoleTestServer();
    for (const key of [`pr_live_${"x".repeat(43)}`, "hello"]) {
      const { response, cookie } = await server.signIn(key);
      expect(response.status).toBe(401);
      expect(cookie).toBe("");
      expect(((await response.json()) as { error: string }).error).toBe(
        "this API key is not valid: it is unknown, revoked or mistyped (keys start with pr_live_); check it and try again",
      );
    }
    const post = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
      server.request("/console/session", { method: "POST", headers, body });
    const badBody = await post(JSON.stringify({ key: server.keys.a }));
    expect(badBody.status).toBe(400);
    expect(await badBody.json()).toEqual({
      error: 'the body must be {"apiKey": "<API key>"}',
      code: "invalid",
    });
    expect((await post("{not json")).status).toBe(400);
    expect(
      (await post(JSON.stringify({ apiKey: server.keys.a }), { "content-type": "text/plain" })).status,
    ).toBe(415);
    expect((await post("x".repeat(2_000_000))).status).toBe(413);
    const { response: foreign } = await server.signIn(server.keys.a, {
      headers: { origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const { response: own } = await server.signIn(server.keys.a, { headers: { origin: server.url } });
    expect(own.status).toBe(200);
  });

  test("more than 10 failed sign-ins in a minute from one address: 429 with Retry-After, even with the right key", async () => {
    server = await startConsoleTestServer();
    const wrong = `pr_live_${"y".repeat(43)}`;
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect((await server.signIn(wrong)).response.status).toBe(401);
    }
    const eleventh = (await server.signIn(wrong)).response;
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get("retry-after")).toBe("60");
    expect(((await eleventh.json()) as { error: string }).error).toContain("too many failed sign-ins");
    expect((await server.signIn(server.keys.a)).response.status).toBe(429);
    server.clock.advance(45_000);
    expect((await server.signIn(server.keys.a)).response.headers.get("retry-after")).toBe("15");
    server.clock.advance(15_000);
    expect((await server.signIn(server.keys.a)).response.status).toBe(200);
  });
});

describe("the session cookie on the public API", () => {
  test("works on REST and tRPC with x-promptrun-console: 1, as the session's tenant", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const rest = await server.request("/api/v1/prompts", { cookie, console: true });
    expect(rest.status).toBe(200);
    expect(await slugsOf(rest)).toEqual(["greet-a"]);
    const trpc = await server.request(trpcQueryPath("prompt.list", {}), { cookie, console: true });
    expect(trpc.status).toBe(200);
    expect(await trpcSlugs(trpc)).toEqual(["greet-a"]);
    // The right Origin is fine too (browsers send one on writes).
    const withOrigin = await server.request("/api/v1/prompts", {
      cookie,
      headers: { ...CONSOLE, origin: server.url },
    });
    expect(withOrigin.status).toBe(200);
  });

  test("403 without x-promptrun-console, or with another Origin (REST and tRPC)", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const refusals = [
      await server.request("/api/v1/prompts", { cookie }),
      await server.request("/api/v1/prompts", { cookie, headers: { "x-promptrun-console": "true" } }),
      await server.request("/api/v1/prompts", {
        cookie,
        headers: { ...CONSOLE, origin: "https://evil.example" },
      }),
      await server.request("/api/v1/prompts", { cookie, headers: { ...CONSOLE, origin: "null" } }),
    ];
    for (const response of refusals) {
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: string }).error).toBeString();
    }
    const trpcRefusals = [
      await server.request(trpcQueryPath("prompt.list", {}), { cookie }),
      await server.request(trpcQueryPath("prompt.list", {}), {
        cookie,
        headers: { ...CONSOLE, origin: "http://127.0.0.1:1" },
      }),
    ];
    for (const response of trpcRefusals) {
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { message: string } }).error.message).toBeString();
    }
    // Another site's script cannot even send the header: the preflight does not allow it, nor credentials.
    const preflight = await server.request("/trpc/prompt.list", {
      method: "OPTIONS",
      headers: {
        origin: "https://evil.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-promptrun-console",
      },
    });
    expect(preflight.headers.get("access-control-allow-headers")).not.toContain("x-promptrun-console");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    // A write from another origin changes nothing.
    const push = await server.request("/api/v1/prompts/greet-a/tags/stolen", {
      method: "PUT",
      cookie,
      headers: { ...CONSOLE, origin: "https://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ version: 1 }),
    });
    expect(push.status).toBe(403);
    expect((await server.services.prompts.summary(server.tenants.a, "greet-a")).tags).toEqual({
      production: 1,
    });
  });

  test("a request with an Authorization header ignores the cookie", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const asB = await server.request("/api/v1/prompts", {
      cookie,
      headers: { ...CONSOLE, authorization: `Bearer ${server.keys.b}` },
    });
    expect(await slugsOf(asB)).toEqual(["greet-b"]);
    const wrongKey = await server.request("/api/v1/prompts", {
      cookie,
      headers: { ...CONSOLE, authorization: `Bearer pr_live_${"z".repeat(43)}` },
    });
    expect(wrongKey.status).toBe(401);
    const trpc = await server.request(trpcQueryPath("prompt.list", {}), {
      cookie,
      headers: { ...CONSOLE, authorization: `Bearer ${server.keys.b}` },
    });
    expect(await trpcSlugs(trpc)).toEqual(["greet-b"]);
  });

  test("revoking the session's key ends it at once", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    expect((await server.request("/api/v1/prompts", { cookie, console: true })).status).toBe(200);
    await server.services.tenants.revokeApiKey(server.keys.a);
    const after = await server.request("/api/v1/prompts", { cookie, console: true });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: string }).error).toContain("sign in again");
    expect((await server.request(trpcQueryPath("prompt.list", {}), { cookie, console: true })).status).toBe(
      401,
    );
  });

  test("sign-out: 204, the cookie cleared, and it no longer works", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const signOut = await server.request("/console/session", { method: "DELETE", cookie });
    expect(signOut.status).toBe(204);
    expect(signOut.headers.get("set-cookie")).toBe(
      "promptrun_console=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict",
    );
    expect((await server.request("/api/v1/prompts", { cookie, console: true })).status).toBe(401);
    // Again, or without a cookie: still 204.
    expect((await server.request("/console/session", { method: "DELETE", cookie })).status).toBe(204);
    expect((await server.request("/console/session", { method: "DELETE" })).status).toBe(204);
  });

  test("GET /console/session: the session's tenant while it lasts; 401 without one or after sign-out; 403 without the header", async () => {
    server = await startConsoleTestServer();
    expect((await server.request("/console/session", { console: true })).status).toBe(401);
    const { cookie, response } = await server.signIn(server.keys.a);
    const signedIn = (await response.json()) as { tenant: { id: string; name: string } };
    const current = await server.request("/console/session", { cookie, console: true });
    expect(current.status).toBe(200);
    expect(await current.json()).toEqual({ tenant: signedIn.tenant });
    expect((await server.request("/console/session", { cookie })).status).toBe(403);
    await server.request("/console/session", { method: "DELETE", cookie });
    expect((await server.request("/console/session", { cookie, console: true })).status).toBe(401);
  });

  test("a session ends after 12 hours idle, and 7 days after sign-in however busy", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const status = async () => (await server.request("/api/v1/prompts", { cookie, console: true })).status;
    server.clock.advance(11 * HOUR);
    expect(await status()).toBe(200);
    server.clock.advance(12 * HOUR);
    expect(await status()).toBe(401);

    const busy = (await server.signIn(server.keys.a)).cookie;
    const busyStatus = async () =>
      (await server.request("/api/v1/prompts", { cookie: busy, console: true })).status;
    for (let step = 1; step <= 15; step++) {
      server.clock.advance(11 * HOUR);
      expect({ hours: step * 11, status: await busyStatus() }).toEqual({ hours: step * 11, status: 200 });
    }
    server.clock.advance(3 * HOUR);
    expect(await busyStatus()).toBe(401);
  });

  test("tenant A's session never sees tenant B's prompts, runs or threads", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const created = await server.request("/api/v1/prompts/greet-b/latest/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${server.keys.b}`, "content-type": "application/json" },
      body: JSON.stringify({ inputs: { name: "B" } }),
    });
    const run = (await created.json()) as { id: string; thread: string };
    const asA = (path: string) => server.request(path, { cookie, console: true });
    expect((await asA(`/api/v1/promptruns/${run.id}`)).status).toBe(404);
    expect((await asA("/api/v1/prompts/greet-b")).status).toBe(404);
    expect(((await (await asA("/api/v1/promptruns")).json()) as { items: unknown[] }).items).toEqual([]);
    expect(await slugsOf(await asA("/api/v1/prompts"))).toEqual(["greet-a"]);
    expect((await asA(trpcQueryPath("run.get", { id: run.id }))).status).toBe(404);
    expect((await asA(trpcQueryPath("thread.get", { id: run.thread }))).status).toBe(404);
    // B's key sees its own thread: the 404 above is the tenant boundary, not a missing thread.
    const asB = await server.request(trpcQueryPath("thread.get", { id: run.thread }), {
      headers: { authorization: `Bearer ${server.keys.b}` },
    });
    expect(asB.status).toBe(200);
  });

  test("everything a key can do: a tag move names the session's key; a stream token opens the thread's stream", async () => {
    server = await startConsoleTestServer();
    const { cookie } = await server.signIn(server.keys.a);
    const moved = await server.request("/api/v1/prompts/greet-a/tags/staging", {
      method: "PUT",
      cookie,
      headers: { ...CONSOLE, "content-type": "application/json", origin: server.url },
      body: JSON.stringify({ version: 1 }),
    });
    expect(moved.status).toBe(200);
    const history = (await (
      await server.request("/api/v1/prompts/greet-a/tags/staging/history", { cookie, console: true })
    ).json()) as { items: Array<{ movedBy: string }> };
    expect(history.items.map((entry) => entry.movedBy)).toEqual([server.keys.a.slice(0, 16)]);

    const thread = crypto.randomUUID();
    const minted = await server.request(`/api/v1/threads/${thread}/stream-token`, {
      method: "POST",
      cookie,
      headers: { ...CONSOLE, origin: server.url },
    });
    expect(minted.status).toBe(200);
    const { token } = (await minted.json()) as { token: string };
    const viaTrpc = await server.request("/trpc/thread.streamToken", {
      method: "POST",
      cookie,
      headers: { ...CONSOLE, "content-type": "application/json" },
      body: JSON.stringify({ thread }),
    });
    expect(viaTrpc.status).toBe(200);
    const controller = new AbortController();
    const stream = await server.request(`/stream/${thread}?token=${token}`, { signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    controller.abort();
    // The stream token dies with the key, as one minted by the key itself.
    await server.services.tenants.revokeApiKey(server.keys.a);
    expect((await server.request(`/stream/${thread}?token=${token}`)).status).toBe(401);
  });

  test("admin procedures stay admin-token only", async () => {
    server = await startConsoleTestServer({ api: { adminToken: "admin-token-for-console-tests" } });
    const { cookie } = await server.signIn(server.keys.a);
    const list = await server.request("/trpc/admin.tenant.list", { cookie, console: true });
    expect(list.status).toBe(401);
    const create = await server.request("/trpc/admin.tenant.create", {
      method: "POST",
      cookie,
      headers: { ...CONSOLE, "content-type": "application/json" },
      body: JSON.stringify({ name: "sneaky" }),
    });
    expect(create.status).toBe(401);
    expect((await server.services.tenants.list()).map((tenant) => tenant.name)).not.toContain("sneaky");
  });
});

describe("PROMPTRUN_CONSOLE=false", () => {
  test("/console, /console/* and /console/session are 404, and the cookie authenticates nothing", async () => {
    server = await startConsoleTestServer({ distDir: null });
    for (const [method, path] of [
      ["GET", "/console"],
      ["GET", "/console/"],
      ["GET", "/console/prompts"],
      ["GET", "/console/assets/app.js"],
      ["POST", "/console/session"],
      ["DELETE", "/console/session"],
    ] as const) {
      const response = await server.request(path, {
        method,
        headers: { "content-type": "application/json" },
        ...(method === "POST" ? { body: JSON.stringify({ apiKey: server.keys.a }) } : {}),
      });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
    }
    // A cookie minted while the console was on (same services) is ignored.
    const { token } = await server.services.consoleSessions.signIn({ apiKey: server.keys.a }, "127.0.0.1");
    const response = await server.request("/api/v1/prompts", {
      cookie: `promptrun_console=${token}`,
      console: true,
    });
    expect(response.status).toBe(401);
  });
});
