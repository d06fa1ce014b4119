/**
 * Per-tenant limits over real HTTP: token buckets on create-run and stream-token (429 with
 * Retry-After and RateLimit-* headers, recovery after the window, other tenants unaffected),
 * the cap on pending runs per tenant, and the cap on open SSE streams per thread.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";
import { createTenant, discard, echoPrompt, pushPrompts, type Tenant } from "./support.ts";

let server: TestServer;
let otherTenant: Tenant;

beforeAll(async () => {
  // Burst 5, one token back every 6 s: a drain (a few calls, well under 6 s even on a busy
  // machine) sees exactly the burst, so an off-by-one in the bucket fails the test.
  server = await startServer({ env: { PROMPTRUN_RATE_LIMIT: "10/m,5" } });
  otherTenant = await createTenant(server, "neighbour");
  await pushPrompts(server, otherTenant.id, [
    {
      ...echoPrompt("greet"),
      inputs: { name: { type: "string" } },
      messages: [{ role: "user", content: "{{name}}" }],
    },
  ]);
});
afterAll(async () => {
  await server?.dispose();
});

type Limited = "create-run" | "stream-token";

const call = (action: Limited, apiKey = server.apiKey) =>
  action === "create-run"
    ? api({ url: server.url, apiKey }, "/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        json: { inputs: { name: "Rate" } },
      })
    : api({ url: server.url, apiKey }, `/api/v1/threads/${crypto.randomUUID()}/stream-token`, {
        method: "POST",
      });

/** Calls until the first 429 (at most 40 calls); returns the successes before it and the 429. */
async function drain(action: Limited): Promise<{ accepted: Response[]; limited: Response }> {
  const accepted: Response[] = [];
  for (let index = 0; index < 40; index++) {
    const response = await call(action);
    if (response.status === 429) return { accepted, limited: response };
    accepted.push(response);
  }
  throw new Error(`${action}: no 429 after 40 calls`);
}

describe.each(["create-run", "stream-token"] as const)("rate limit on %s (10/m, burst 5)", (action) => {
  test("exactly the burst passes, then 429 with Retry-After and RateLimit-*, then recovery after Retry-After", async () => {
    const started = Date.now();
    const { accepted, limited } = await drain(action);
    // The premise of exactness: no token came back while the calls ran.
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(accepted.length).toBe(5);
    const expectedStatus = action === "create-run" ? 202 : 200;
    expect(accepted.every((response) => response.status === expectedStatus)).toBe(true);
    expect(accepted.map((response) => response.headers.get("ratelimit-limit"))).toEqual([
      "5",
      "5",
      "5",
      "5",
      "5",
    ]);
    expect(accepted.map((response) => response.headers.get("ratelimit-remaining"))).toEqual([
      "4",
      "3",
      "2",
      "1",
      "0",
    ]);

    expect(limited.headers.get("content-type")).toContain("application/json");
    expect(((await limited.json()) as { error: string }).error).toContain("rate limit");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    // The next token is at most 6 s away.
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(6);
    expect(limited.headers.get("ratelimit-limit")).toBe("5");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("ratelimit-reset"))).toBeGreaterThanOrEqual(1);

    // Another tenant has its own bucket.
    expect((await call(action, otherTenant.apiKey)).status).toBe(expectedStatus);

    await Bun.sleep(retryAfter * 1000 + 100);
    const recovered = await call(action);
    expect(recovered.status).toBe(expectedStatus);
  });
});

describe("pending-run cap per tenant (PROMPTRUN_MAX_PENDING_RUNS)", () => {
  test("runs beyond the cap get 429 with Retry-After; a finished run frees a place; replays are not refused", async () => {
    const own = await startServer({
      seedDemo: false,
      env: { PROMPTRUN_MAX_PENDING_RUNS: "3", PROMPTRUN_TENANT_CONCURRENCY: "1" },
    });
    try {
      const tenant = await createTenant(own, "queued");
      await pushPrompts(own, tenant.id, [echoPrompt("slow", 60_000)]);
      const client = { url: own.url, apiKey: tenant.apiKey };
      const start = (key?: string) =>
        api(client, "/api/v1/prompts/slow/latest/runs", {
          method: "POST",
          json: { inputs: { text: "one two three" } },
          ...(key ? { headers: { "idempotency-key": key } } : {}),
        });
      const ids: string[] = [];
      for (const key of ["first", undefined, undefined]) {
        const response = await start(key);
        expect(response.status).toBe(202);
        ids.push(((await response.json()) as { id: string }).id);
      }
      const refused = await start();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(((await refused.json()) as { error: string }).error).toContain("too many pending runs");

      // A replay creates nothing, so a full queue does not refuse it.
      const replay = await start("first");
      expect(replay.status).toBe(202);
      expect(((await replay.json()) as { id: string }).id).toBe(ids[0]!);

      const cancelled = await api(client, `/api/v1/promptruns/${ids[1]}/cancel`, { method: "POST" });
      expect(cancelled.status).toBe(200);
      expect((await start()).status).toBe(202);
      expect((await start()).status).toBe(429);
    } finally {
      await discard(own);
    }
  });
});

describe("open SSE streams per thread (PROMPTRUN_MAX_STREAMS_PER_THREAD)", () => {
  test("streams beyond the cap get 429; a closed stream frees its place", async () => {
    const own = await startServer({ env: { PROMPTRUN_MAX_STREAMS_PER_THREAD: "2" } });
    const open: SseConnection[] = [];
    try {
      const thread = crypto.randomUUID();
      const minted = await api(own, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
      const { token, url } = (await minted.json()) as { token: string; url: string };
      for (let index = 0; index < 2; index++) {
        const connection = await SseConnection.open(url, { token });
        open.push(connection);
        expect(connection.status).toBe(200);
        await connection.waitFor((event) => event.event === "ready");
      }
      const refused = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).not.toBeNull();
      expect(((await refused.json()) as { error: string }).error).toContain("too many open streams");

      // The ?token= form counts against the same thread.
      expect((await fetch(`${url}?token=${encodeURIComponent(token)}`)).status).toBe(429);

      open.shift()!.close();
      // The server notices the disconnect asynchronously.
      const deadline = Date.now() + 10_000;
      let reopened: SseConnection | null = null;
      while (reopened === null && Date.now() < deadline) {
        const attempt = await SseConnection.open(url, { token });
        if (attempt.status === 200) reopened = attempt;
        else await Bun.sleep(50);
      }
      expect(reopened).not.toBeNull();
      open.push(reopened!);
      // Events still flow through a capped stream.
      const run = await api(own, "/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        json: { inputs: { name: "Capped" }, thread },
      });
      const { id } = (await run.json()) as { id: string };
      const completed = await reopened!.waitFor(
        (event) => event.event === "run.completed" && event.data.runId === id,
      );
      expect(completed.data.output).toBe("Hello Capped, welcome to Promptrun!");
    } finally {
      for (const connection of open) connection.close();
      await own.dispose();
    }
  });
});
