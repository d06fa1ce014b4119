/**
 * A stream token is only as good as what minted it: after the minting API key is revoked or the
 * tenant deactivated (both through the CLI, i.e. another process writing the database), the token
 * is refused at connect — SSE, tRPC `thread.onEvents` and tRPC `run.get` — and open streams end
 * with `end` {reason} at a following heartbeat. Tokens minted before keys were named (no `key`
 * claim) keep working until they expire.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, hkdfSync, randomUUID } from "node:crypto";
import { api, startServer, type TestServer } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";

const SECRET = `revocation-suite-${"s".repeat(32)}`;
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_SECRET: SECRET, PROMPTRUN_PING_INTERVAL_MS: "300" } });
});
afterAll(async () => {
  await server?.dispose();
});

/** A tenant of its own (the suite deactivates tenants) with one API key. */
async function newTenant(): Promise<{ id: string; apiKey: string }> {
  const created = await server.cli<{ apiKey: string; tenant: { id: string } }>(
    "tenants",
    "create",
    `revocation-${randomUUID().slice(0, 8)}`,
  );
  return { id: created.json.tenant.id, apiKey: created.json.apiKey };
}

async function mint(apiKey: string, thread = randomUUID()): Promise<{ thread: string; token: string }> {
  const response = await api({ url: server.url, apiKey }, `/api/v1/threads/${thread}/stream-token`, {
    method: "POST",
  });
  expect(response.status).toBe(200);
  return { thread, token: ((await response.json()) as { token: string }).token };
}

async function connectStatus(thread: string, token: string): Promise<number> {
  const response = await fetch(`${server.url}/stream/${thread}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await response.body?.cancel().catch(() => {});
  return response.status;
}

/** tRPC over plain HTTP, as a browser holding only the stream token would call it. */
async function trpcRunGet(token: string, id: string): Promise<number> {
  const input = encodeURIComponent(JSON.stringify({ id }));
  return (
    await fetch(`${server.url}/trpc/run.get?input=${input}`, {
      headers: { authorization: `Bearer ${token}` },
    })
  ).status;
}

async function trpcSubscribeStatus(thread: string, token: string): Promise<string> {
  const input = encodeURIComponent(JSON.stringify({ thread, token }));
  const response = await fetch(`${server.url}/trpc/thread.onEvents?input=${input}`, {
    headers: { accept: "text/event-stream" },
  });
  const reader = response.body!.getReader();
  let text = "";
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !/event: serialized-error|"type":"ready"/.test(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel().catch(() => {});
  return text;
}

async function startRun(apiKey: string, thread: string): Promise<string> {
  const response = await api({ url: server.url, apiKey }, "/api/v1/prompts/greet/latest/runs", {
    method: "POST",
    json: { inputs: { name: "x" }, thread },
  });
  return response.status === 202 ? ((await response.json()) as { id: string }).id : "";
}

describe("stream tokens after their key is revoked or their tenant deactivated", () => {
  test("a revoked minting key: connect refused (SSE 401, tRPC onEvents and run.get), open stream ended", async () => {
    const tenant = await newTenant();
    const { thread, token } = await mint(tenant.apiKey);
    expect(await connectStatus(thread, token)).toBe(200);
    const open = await SseConnection.open(`${server.url}/stream/${thread}`, { token });
    await open.waitFor((event) => event.event === "ready");

    const revoked = await server.cli("keys", "revoke", tenant.apiKey);
    expect(revoked.code).toBe(0);

    const end = await open.waitFor((event) => event.event === "end", 15_000);
    expect(end.data).toEqual({ reason: "key_revoked" });
    open.close();
    expect(await connectStatus(thread, token)).toBe(401);
    expect(await trpcRunGet(token, randomUUID())).toBe(401);
    expect(await trpcSubscribeStatus(thread, token)).toContain("UNAUTHORIZED");
  });

  test("a deactivated tenant: connect refused with 403, open stream ended with tenant_inactive", async () => {
    const tenant = await newTenant();
    await server.cli("prompts", "push", `${import.meta.dir}/../../prompts`, "--tenant", tenant.id);
    const { thread, token } = await mint(tenant.apiKey);
    const runId = await startRun(tenant.apiKey, thread);
    expect(await trpcRunGet(token, runId)).toBe(200);
    const open = await SseConnection.open(`${server.url}/stream/${thread}`, { token });
    await open.waitFor((event) => event.event === "ready");

    const deactivated = await server.cli("tenants", "subscription", tenant.id, "inactive");
    expect(deactivated.code).toBe(0);

    const end = await open.waitFor((event) => event.event === "end", 15_000);
    expect(end.data).toEqual({ reason: "tenant_inactive" });
    open.close();
    expect(await connectStatus(thread, token)).toBe(403);
    expect(await trpcRunGet(token, runId)).toBe(403);
    expect(await trpcSubscribeStatus(thread, token)).toContain("FORBIDDEN");
  });

  test("a token minted before keys were named (no key claim) keeps working until it expires", async () => {
    const tenant = await newTenant();
    await server.cli("keys", "revoke", tenant.apiKey);
    const thread = randomUUID();
    const key = Buffer.from(hkdfSync("sha256", SECRET, "promptrun", "promptrun/stream-token/v1", 32));
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${encode({ alg: "HS256", typ: "JWT" })}.${encode({
      sub: tenant.id,
      aud: "promptrun:stream",
      thread,
      scope: "thread:read",
      iat: now,
      exp: now + 60,
      jti: randomUUID(),
    })}`;
    const legacy = `${unsigned}.${createHmac("sha256", key).update(unsigned).digest("base64url")}`;
    expect(await connectStatus(thread, legacy)).toBe(200);
  });
});
