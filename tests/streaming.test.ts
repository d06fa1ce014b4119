/**
 * Live streaming over real sockets: stream tokens, the SSE endpoint, isolation between threads
 * and tenants, Last-Event-ID resumption, and refused tokens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";
import { assembleRunText, SseConnection } from "./support/sse.ts";

let server: TestServer;
let other: { apiKey: string };

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_PING_INTERVAL_MS: "1000" } });
  const created = await server.cli<{ apiKey: string; tenant: { id: string } }>("tenants", "create", "other");
  other = { apiKey: created.json.apiKey };
  await server.cli("prompts", "push", `${import.meta.dir}/../prompts`, "--tenant", created.json.tenant.id);
});
afterAll(async () => {
  await server?.dispose();
});

const mint = async (thread: string, key = server.apiKey) => {
  const response = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST", key });
  expect(response.status).toBe(200);
  return (await response.json()) as { token: string; url: string; expiresAt: string };
};

const startChat = async (thread: string, message: string, key = server.apiKey) => {
  const response = await api(server, "/api/v1/prompts/chat/latest/runs", {
    method: "POST",
    key,
    json: { inputs: { message }, thread },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
};

describe("SSE stream of a thread", () => {
  test("ready, run.started, every token in order, run.completed equal to GET", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await mint(thread);
    const stream = await SseConnection.open(url, { token });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    expect(stream.headers.get("cache-control")).toContain("no-cache");
    expect(stream.headers.get("x-accel-buffering")).toBe("no");
    await stream.waitFor((event) => event.event === "ready");

    const runId = await startChat(thread, "the quick brown fox jumps over the lazy dog");
    const completed = await stream.waitFor(
      (event) => event.event === "run.completed" && event.data.runId === runId,
    );
    const run = await waitForRun(server, runId);
    const tokens = stream.events.filter((event) => event.event === "run.token" && event.data.runId === runId);
    expect(tokens.map((event) => event.data.index)).toEqual(tokens.map((_, index) => index));
    expect(assembleRunText(stream.events, runId)).toBe(String(run.output));
    expect(completed.data.output).toBe(run.output);
    expect(completed.data.tokenUsage).toEqual(run.tokenUsage);
    expect(completed.data.cost).toEqual(run.cost);
    const started = stream.events.find(
      (event) => event.event === "run.started" && event.data.runId === runId,
    );
    expect(started?.data).toMatchObject({ thread, channel: "default", prompt: { slug: "chat" } });
    const ids = stream.events
      .filter((event) => event.event !== "ready")
      .map((event) => BigInt(event.id ?? "0"));
    for (let index = 1; index < ids.length; index++) expect(ids[index]! > ids[index - 1]!).toBe(true);
    stream.close();
  });

  test("?token= works for EventSource clients", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await mint(thread);
    const stream = await SseConnection.open(url, { token, query: true });
    expect(stream.status).toBe(200);
    await stream.waitFor((event) => event.event === "ready");
    stream.close();
  });

  test("two threads and two tenants never see each other's events", async () => {
    const shared = crypto.randomUUID();
    const second = crypto.randomUUID();
    const mine = await SseConnection.open((await mint(shared)).url, { token: (await mint(shared)).token });
    const theirs = await SseConnection.open((await mint(shared, other.apiKey)).url, {
      token: (await mint(shared, other.apiKey)).token,
    });
    const secondThread = await SseConnection.open((await mint(second)).url, {
      token: (await mint(second)).token,
    });
    await Promise.all(
      [mine, theirs, secondThread].map((stream) => stream.waitFor((event) => event.event === "ready")),
    );

    const myRun = await startChat(shared, "mine only");
    const theirRun = await startChat(shared, "theirs only", other.apiKey);
    const secondRun = await startChat(second, "second thread");
    await mine.waitFor((event) => event.event === "run.completed" && event.data.runId === myRun);
    await theirs.waitFor((event) => event.event === "run.completed" && event.data.runId === theirRun);
    await secondThread.waitFor((event) => event.event === "run.completed" && event.data.runId === secondRun);
    const runIds = (stream: SseConnection) =>
      new Set(stream.events.map((event) => event.data.runId).filter(Boolean));
    expect([...runIds(mine)]).toEqual([myRun]);
    expect([...runIds(theirs)]).toEqual([theirRun]);
    expect([...runIds(secondThread)]).toEqual([secondRun]);
    for (const stream of [mine, theirs, secondThread]) stream.close();
  });

  test("a dropped subscriber reconnects with Last-Event-ID and assembles the exact output", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await mint(thread);
    const first = await SseConnection.open(url, { token });
    await first.waitFor((event) => event.event === "ready");
    const runId = await startChat(thread, Array.from({ length: 30 }, (_, i) => `word${i}`).join(" "));
    await first.waitFor((event) => event.event === "run.token" && Number(event.data.index) >= 5);
    first.close();
    // What this subscriber had when it dropped: later chunks of the aborted body do not count.
    const firstEvents = [...first.events];
    const lastSeen = firstEvents.filter((event) => event.id).at(-1)!;
    await Bun.sleep(150); // tokens keep flowing while nobody listens

    const second = await SseConnection.open(url, { token, lastEventId: lastSeen.id! });
    await second.waitFor((event) => event.event === "run.completed" && event.data.runId === runId);
    const seenIds = new Set(firstEvents.map((event) => event.id));
    const combined = [
      ...firstEvents,
      ...second.events.filter((event) => !event.id || !seenIds.has(event.id)),
    ];
    const duplicates = second.events.filter(
      (event) => event.event !== "ready" && event.id && seenIds.has(event.id),
    );
    expect(duplicates).toEqual([]);
    const run = await waitForRun(server, runId);
    expect(assembleRunText(combined, runId)).toBe(String(run.output));
    second.close();
  });

  test("without Last-Event-ID nothing is replayed", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await mint(thread);
    const runId = await startChat(thread, "nobody is listening");
    await waitForRun(server, runId);
    const late = await SseConnection.open(url, { token });
    await late.waitFor((event) => event.event === "ready");
    await Bun.sleep(200);
    expect(late.events.filter((event) => event.data.runId === runId)).toEqual([]);
    late.close();
  });

  test("refused: missing 401, forged 401, other thread 403, malformed thread 404", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await mint(thread);
    expect((await fetch(url)).status).toBe(401);
    const [header, payload] = token.split(".");
    const forged = `${header}.${payload}.${"A".repeat(43)}`;
    expect((await fetch(url, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${payload}.`;
    expect((await fetch(url, { headers: { authorization: `Bearer ${none}` } })).status).toBe(401);
    const otherThread = `${server.url}/stream/${crypto.randomUUID()}`;
    expect((await fetch(otherThread, { headers: { authorization: `Bearer ${token}` } })).status).toBe(403);
    expect(
      (await fetch(`${server.url}/stream/not-a-uuid`, { headers: { authorization: `Bearer ${token}` } }))
        .status,
    ).toBe(404);
  });

  test("an expired token is refused", async () => {
    const short = await startServer({ env: { PROMPTRUN_STREAM_TOKEN_TTL: "1" } });
    try {
      const thread = crypto.randomUUID();
      const response = await api(short, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
      const { token, url } = (await response.json()) as { token: string; url: string };
      await Bun.sleep(2_100);
      expect((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    } finally {
      await short.dispose();
    }
  });
});
