import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "./test-app.ts";
import { createThreadStreamCap } from "./thread-stream-cap.ts";

describe("createThreadStreamCap", () => {
  test("counts per key, refuses at the cap, frees on release (once)", () => {
    const cap = createThreadStreamCap(2);
    const first = cap.reserve("a");
    const second = cap.reserve("a");
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(cap.reserve("a")).toBeNull();
    expect(cap.reserve("b")).not.toBeNull();
    first?.();
    first?.();
    expect(cap.openFor("a")).toBe(1);
    expect(cap.reserve("a")).not.toBeNull();
    expect(cap.reserve("a")).toBeNull();
  });
});

describe("GET /stream/:thread behind the per-thread cap", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ app: { maxStreamsPerThread: 2 } });
  });
  afterAll(async () => {
    await t.dispose();
  });

  const mint = async (key: string, thread: string) => {
    const tenant = await t.services.auth.authenticate(`Bearer ${key}`);
    return (await t.services.streamTokens.issue(tenant, thread)).token;
  };
  const open = (thread: string, token: string) =>
    t.request(`/stream/${thread}`, { headers: { authorization: `Bearer ${token}` } });

  test("the third stream on a thread gets 429; closing one frees its slot; other threads and tenants are separate", async () => {
    const thread = crypto.randomUUID();
    const token = await mint(t.keys.a, thread);
    const first = await open(thread, token);
    const second = await open(thread, token);
    expect([first.status, second.status]).toEqual([200, 200]);

    const refused = await open(thread, token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(((await refused.json()) as { error: string }).error).toContain("too many open streams");

    // The same thread id under another tenant, and another thread of the same tenant, are unaffected.
    const otherTenant = await open(thread, await mint(t.keys.b, thread));
    expect(otherTenant.status).toBe(200);
    const otherThread = crypto.randomUUID();
    const elsewhere = await open(otherThread, await mint(t.keys.a, otherThread));
    expect(elsewhere.status).toBe(200);

    // Invalid tokens still get the SSE handler's own answers.
    expect((await open(thread, "garbage")).status).toBe(401);
    expect((await open(thread, await mint(t.keys.a, otherThread))).status).toBe(403);

    // The stream is the SSE session's own: the `ready` event comes first; cancelling frees the slot.
    const reader = first.body!.getReader();
    const chunk = await reader.read();
    expect(new TextDecoder().decode(chunk.value)).toContain("event: ready");
    await reader.cancel();
    const again = await open(thread, token);
    expect(again.status).toBe(200);
    expect((await open(thread, token)).status).toBe(429);

    for (const response of [second, otherTenant, elsewhere, again]) await response.body?.cancel();
    const afterAllClosed = await open(thread, token);
    expect(afterAllClosed.status).toBe(200);
    await afterAllClosed.body?.cancel();
  });

  test("a stream ended by the server (shutdown) frees its slot", async () => {
    const thread = crypto.randomUUID();
    const token = await mint(t.keys.a, thread);
    const responses = [await open(thread, token), await open(thread, token)];
    expect((await open(thread, token)).status).toBe(429);
    const drained = responses.map((response) => response.text());
    t.app.closeAllStreams("shutdown");
    const texts = await Promise.all(drained);
    expect(texts.every((text) => text.includes("event: end"))).toBe(true);
    const reopened = await open(thread, token);
    expect(reopened.status).toBe(200);
    await reopened.body?.cancel();
  });
});
