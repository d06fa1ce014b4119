import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { connect as connectTcp, type Socket } from "node:net";
import type { ThreadEvent } from "@promptrun/contract";
import { waitFor } from "@promptrun/core/testing";
import { encodeSseMessage } from "./encode.ts";
import { type ApiTestKit, createApiTestKit } from "./testing/api-test-kit.ts";
import { readSse, type SseReader } from "./testing/sse-reader.ts";
import { REPLAY_TOO_LARGE_REASON, RESET_REASON } from "./thread-feed.ts";

const RUN_ID = "0196f3c1-1f0e-7a3b-8b7c-1234567890ab";

const tokenEvent = (index: number, delta = `word${index} `): ThreadEvent => ({
  type: "run.token",
  data: { runId: RUN_ID, channel: "default", index, delta },
});

async function mint(kit: ApiTestKit, tenant = kit.tenantA, thread = crypto.randomUUID()) {
  const authenticated = await kit.services.auth.authenticate(`Bearer ${tenant.apiKey}`);
  const { token } = await kit.services.streamTokens.issue(authenticated, thread);
  return { thread, token };
}

async function open(
  kit: ApiTestKit,
  thread: string,
  options: { token?: string; headers?: Record<string, string>; query?: string } = {},
): Promise<SseReader> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${kit.url}/stream/${thread}${options.query ?? ""}`, { headers });
  expect(response.status).toBe(200);
  return readSse(response);
}

const errorOf = async (response: Response) => ((await response.json()) as { error: string }).error;

describe("GET /stream/:thread refusals", () => {
  let kit: ApiTestKit;
  beforeEach(async () => {
    kit = await createApiTestKit();
  });
  afterEach(() => kit.close());

  const request = (thread: string, headers: Record<string, string> = {}, query = "") =>
    kit.stream(new Request(`http://local/stream/${thread}${query}`, { headers }), thread);

  test("404 for a malformed thread id, before looking at the token", async () => {
    const response = await request("not-a-uuid");
    expect(response.status).toBe(404);
    expect(await errorOf(response)).toContain("malformed thread id");
  });

  test("401 without a token, with a forged one, a non-bearer header or an expired one", async () => {
    const { thread, token } = await mint(kit);
    expect((await request(thread)).status).toBe(401);
    const [header, payload] = token.split(".");
    expect(
      (await request(thread, { authorization: `Bearer ${header}.${payload}.forgedsignature` })).status,
    ).toBe(401);
    expect((await request(thread, { authorization: `Basic ${token}` })).status).toBe(401);
    expect((await request(thread, {}, "?token=garbage")).status).toBe(401);
    kit.clock.advance(301_000);
    const expired = await request(thread, { authorization: `Bearer ${token}` });
    expect(expired.status).toBe(401);
    expect(await errorOf(expired)).toBe("invalid or expired stream token");
    expect(kit.bus.activeSubscriptions()).toBe(0);
  });

  test("403 for a token of another thread", async () => {
    const { token } = await mint(kit);
    const response = await request(crypto.randomUUID(), { authorization: `Bearer ${token}` });
    expect(response.status).toBe(403);
    expect(kit.bus.activeSubscriptions()).toBe(0);
    expect(kit.metrics.opened).toBe(0);
  });
});

describe("GET /stream/:thread over a socket", () => {
  let kit: ApiTestKit;
  beforeEach(async () => {
    kit = await createApiTestKit({ api: { pingIntervalMs: 60_000 } });
  });
  afterEach(() => kit.close());

  test("headers, ready first, then each published event once, in order, byte for byte", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token });
    expect(sse.response.headers.get("content-type")).toBe("text/event-stream");
    expect(sse.response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(sse.response.headers.get("x-accel-buffering")).toBe("no");
    const [ready] = await sse.waitForMessages(1);
    expect(ready).toMatchObject({ event: "ready", data: JSON.stringify({ thread }) });
    expect(ready?.id).toMatch(/^\d+$/);
    expect(kit.metrics.opened).toBe(1);

    const events: ThreadEvent[] = [
      {
        type: "run.started",
        data: {
          runId: RUN_ID,
          thread,
          channel: "default",
          prompt: { slug: "greet", version: 1 },
          attempt: 1,
        },
      },
      tokenEvent(0, "Hello"),
      tokenEvent(1, ' "world"\n'),
      {
        type: "run.failed",
        data: { runId: RUN_ID, error: "cancelled", cost: null, finishedAt: "2030-01-01T00:00:00.000Z" },
      },
    ];
    for (const event of events) kit.services.events.publish(kit.tenantA.id, thread, event);
    const messages = await sse.waitForMessages(1 + events.length);
    const received = messages.slice(1);
    expect(received.map((message) => message.event)).toEqual(events.map((event) => event.type));
    expect(received.map((message) => JSON.parse(message.data))).toEqual(events.map((event) => event.data));
    const ids = messages.map((message) => BigInt(message.id ?? "0"));
    // Ready's id is the position before the first event: every id increases from it.
    expect(ids.every((id, index) => index === 0 || id > ids[index - 1]!)).toBe(true);
    const expectedBytes = [
      encodeSseMessage(messages[0]!.id!, { type: "ready", data: { thread } }),
      ...received.map((message, index) => encodeSseMessage(message.id!, events[index]!)),
    ]
      .map((bytes) => new TextDecoder().decode(bytes))
      .join("");
    expect(sse.text()).toBe(expectedBytes);
    await sse.close();
  });

  test("workflow events are delivered like run events: in order, byte for byte, beside the steps' run events", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token });
    await sse.waitForMessages(1);
    const workflowRunId = "0196f3c1-1f0e-7a3b-8b7c-1234567890b1";
    const finishedAt = "2030-01-01T00:00:00.000Z";
    const cost = {
      success: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0, priced: true },
      retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
      total: 0,
    };
    const events: ThreadEvent[] = [
      { type: "workflow.started", data: { workflowRunId, workflow: { slug: "triage", version: 2 } } },
      { type: "workflow.step", data: { workflowRunId, step: "classify", status: "running", runId: RUN_ID } },
      tokenEvent(0, "account"),
      {
        type: "workflow.step",
        data: { workflowRunId, step: "classify", status: "completed", runId: RUN_ID },
      },
      { type: "workflow.step", data: { workflowRunId, step: "answer", status: "skipped", runId: null } },
      {
        type: "workflow.completed",
        data: {
          workflowRunId,
          output: "account",
          outputJson: null,
          tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
          cost,
          finishedAt,
        },
      },
      { type: "workflow.failed", data: { workflowRunId, error: "cancelled", cost: null, finishedAt } },
    ];
    for (const event of events) kit.services.events.publish(kit.tenantA.id, thread, event);
    const received = (await sse.waitForMessages(1 + events.length)).slice(1);
    expect(received.map((message) => message.event)).toEqual(events.map((event) => event.type));
    expect(received.map((message) => JSON.parse(message.data))).toEqual(events.map((event) => event.data));
    // `outputJson: null` is sent, not dropped.
    expect(received[5]?.data).toContain('"outputJson":null');
    expect(sse.text()).toEndWith(
      new TextDecoder().decode(encodeSseMessage(received.at(-1)?.id ?? "", events.at(-1) as ThreadEvent)),
    );
    await sse.close();
  });

  test("?token= works for EventSource clients that cannot send headers", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { query: `?token=${encodeURIComponent(token)}` });
    expect((await sse.waitForMessages(1))[0]?.event).toBe("ready");
    await sse.close();
  });

  test("threads and tenants never mix, even on the same thread id", async () => {
    const { thread, token: tokenA } = await mint(kit, kit.tenantA);
    const { token: tokenB } = await mint(kit, kit.tenantB, thread);
    const { thread: otherThread, token: otherToken } = await mint(kit, kit.tenantA);
    const subscriberA = await open(kit, thread, { token: tokenA });
    const subscriberB = await open(kit, thread, { token: tokenB });
    const subscriberOther = await open(kit, otherThread, { token: otherToken });
    for (const sse of [subscriberA, subscriberB, subscriberOther]) await sse.waitForMessages(1);

    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(0, "for A"));
    kit.services.events.publish(kit.tenantB.id, thread, tokenEvent(0, "for B"));
    kit.services.events.publish(kit.tenantA.id, otherThread, tokenEvent(0, "for A, other thread"));
    const deltas = async (sse: SseReader) =>
      (await sse.waitForMessages(2)).slice(1).map((message) => JSON.parse(message.data).delta);
    expect(await deltas(subscriberA)).toEqual(["for A"]);
    expect(await deltas(subscriberB)).toEqual(["for B"]);
    expect(await deltas(subscriberOther)).toEqual(["for A, other thread"]);
    // Nothing else arrives behind them.
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(1, "last"));
    await subscriberA.waitForMessages(3);
    for (const sse of [subscriberB, subscriberOther]) expect(sse.messages).toHaveLength(2);
    for (const sse of [subscriberA, subscriberB, subscriberOther]) await sse.close();
  });

  test("Last-Event-ID (header or query) replays what was missed, then goes live", async () => {
    const { thread, token } = await mint(kit);
    const first = await open(kit, thread, { token });
    for (let index = 0; index < 3; index++)
      kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(index));
    const seen = await first.waitForMessages(4);
    await first.close();
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(3));

    const resumeFrom = seen[2]!.id!;
    const resumed = await open(kit, thread, { token, headers: { "last-event-id": resumeFrom } });
    const replayed = await resumed.waitForMessages(3);
    expect(replayed[0]).toMatchObject({ event: "ready", id: resumeFrom });
    expect(replayed.slice(1).map((message) => JSON.parse(message.data).index)).toEqual([2, 3]);
    expect(replayed[1]?.id).toBe(seen[3]!.id);
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(4));
    expect(JSON.parse((await resumed.waitForMessages(4))[3]!.data).index).toBe(4);
    await resumed.close();

    const byQuery = await open(kit, thread, { token, query: `?lastEventId=${resumeFrom}` });
    const again = await byQuery.waitForMessages(4);
    expect(again.slice(1).map((message) => JSON.parse(message.data).index)).toEqual([2, 3, 4]);
    await byQuery.close();
  });

  test("a reconnect with the id of `ready` (nothing else seen) replays what was published since", async () => {
    const { thread, token } = await mint(kit);
    // Events before the subscription must not come back.
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(0));
    const first = await open(kit, thread, { token });
    const [ready] = await first.waitForMessages(1);
    expect(ready?.id).toMatch(/^\d+$/);
    await first.close();
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(1));
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(2));

    const resumed = await open(kit, thread, { token, headers: { "last-event-id": ready!.id! } });
    const messages = await resumed.waitForMessages(3);
    expect(messages.map((message) => message.event)).toEqual(["ready", "run.token", "run.token"]);
    expect(messages[0]?.id).toBe(ready!.id);
    expect(messages.slice(1).map((message) => JSON.parse(message.data).index)).toEqual([1, 2]);
    await resumed.close();
  });

  test("`end` after only `ready` carries the ready id, never an empty one", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token });
    const [ready] = await sse.waitForMessages(1);
    kit.stream.closeAllStreams();
    const [, end] = await sse.waitForMessages(2);
    expect(end).toMatchObject({ event: "end", id: ready!.id });
    await sse.close();
  });

  test("a Last-Event-ID older than the replay buffer gets a reset, then live events", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token, headers: { "last-event-id": "1" } });
    const [ready, reset] = await sse.waitForMessages(2);
    // Both carry the current position: resending the stale "1" would reset again on the next reconnect.
    expect(ready?.id).toMatch(/^\d+$/);
    expect(ready?.id).not.toBe("1");
    expect(reset).toEqual({
      id: ready!.id,
      event: "reset",
      data: JSON.stringify({ thread, reason: RESET_REASON }),
    });
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(0));
    expect((await sse.waitForMessages(3))[2]?.event).toBe("run.token");
    await sse.close();
  });

  test("a client disconnect unsubscribes from the bus and closes the stream's books", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token });
    await sse.waitForMessages(1);
    expect(kit.bus.activeSubscriptions()).toBe(1);
    expect(kit.stream.openStreams()).toBe(1);
    await sse.close();
    await waitFor(() => kit.bus.activeSubscriptions() === 0, "the bus subscription to end");
    expect(kit.stream.openStreams()).toBe(0);
    expect(kit.metrics.closed).toBe(1);
    // Publishing afterwards reaches no one and throws nothing.
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(0));
  });

  test("closeAllStreams ends every stream with `end` {reason: shutdown}", async () => {
    const first = await mint(kit);
    const second = await mint(kit, kit.tenantB);
    const streams = [await open(kit, first.thread, first), await open(kit, second.thread, second)];
    for (const sse of streams) await sse.waitForMessages(1);
    kit.services.events.publish(kit.tenantA.id, first.thread, tokenEvent(0));
    await streams[0]!.waitForMessages(2);
    expect(kit.stream.closeAllStreams()).toBe(2);
    for (const sse of streams) {
      await sse.closed;
      const end = sse.messages.at(-1)!;
      expect(end.event).toBe("end");
      expect(JSON.parse(end.data)).toEqual({ reason: "shutdown" });
    }
    // The end event keeps the resume position: the id of the last event delivered.
    expect(streams[0]!.messages.at(-1)!.id).toBe(streams[0]!.messages[1]!.id);
    expect(kit.stream.openStreams()).toBe(0);
    expect(kit.bus.activeSubscriptions()).toBe(0);
    expect(kit.metrics.closed).toBe(2);
  });
});

describe("GET /stream/:thread timers", () => {
  let kit: ApiTestKit;
  beforeEach(async () => {
    kit = await createApiTestKit({ api: { pingIntervalMs: 25 } });
  });
  afterEach(() => kit.close());

  test("a `: ping` comment arrives every pingIntervalMs", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token });
    expect(await sse.waitForComments(2)).toEqual(["ping", "ping"]);
    expect(sse.messages.map((message) => message.event)).toEqual(["ready"]);
    await sse.close();
  });

  test("the stream ends with `end` {reason: token_expired} once the token's exp has passed", async () => {
    const { thread, token } = await mint(kit);
    const sse = await open(kit, thread, { token });
    await sse.waitForComments(1);
    kit.clock.advance(301_000);
    await sse.closed;
    expect(sse.messages.map((message) => message.event)).toEqual(["ready", "end"]);
    expect(JSON.parse(sse.messages[1]!.data)).toEqual({ reason: "token_expired" });
    expect(kit.bus.activeSubscriptions()).toBe(0);
    expect(kit.metrics.closed).toBe(1);
  });
});

describe("slow subscribers", () => {
  const BUFFER_BYTES = 64 * 1024;
  let kit: ApiTestKit;
  beforeEach(async () => {
    kit = await createApiTestKit({ api: { pingIntervalMs: 60_000, subscriberBufferBytes: BUFFER_BYTES } });
  });
  afterEach(() => kit.close());

  /** A subscriber that reads the response head and then never reads again (its TCP window fills). */
  function stalledSubscriber(thread: string, token: string): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connectTcp(Number(new URL(kit.url).port), "127.0.0.1");
      socket.once("error", reject);
      socket.once("connect", () =>
        socket.write(
          `GET /stream/${thread} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`,
        ),
      );
      socket.once("data", () => {
        socket.pause();
        resolve(socket);
      });
    });
  }

  test("a replay larger than half the allowance becomes a reset, then live events", async () => {
    const { thread, token } = await mint(kit);
    const first = await open(kit, thread, { token });
    const delta = "y".repeat(40 * 1024);
    for (let index = 0; index < 3; index++) {
      kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(index, delta));
      await first.waitForMessages(2 + index);
    }
    await first.close();
    const resumeFrom = first.messages[1]!.id!;
    const resumed = await open(kit, thread, { token, headers: { "last-event-id": resumeFrom } });
    kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(3));
    const messages = await resumed.waitForMessages(3);
    expect(messages.map((message) => message.event)).toEqual(["ready", "reset", "run.token"]);
    expect(JSON.parse(messages[1]!.data)).toEqual({ thread, reason: REPLAY_TOO_LARGE_REASON });
    expect(JSON.parse(messages[2]!.data).index).toBe(3);
    await resumed.close();
  });

  test(
    "a stalled subscriber is dropped with bounded backlog while another receives everything",
    async () => {
      const { thread, token } = await mint(kit);
      const fast = await open(kit, thread, { token });
      await fast.waitForMessages(1);
      const stalled = await stalledSubscriber(thread, token);
      await waitFor(() => kit.stream.openStreams() === 2, "both streams to be open");

      const delta = "x".repeat(8 * 1024);
      let published = 0;
      // Socket buffers on loopback absorb a few MB before the backlog starts to grow; 48 MB is ample.
      // Two events per turn stay well inside the fast reader's 64 KiB allowance.
      while (kit.stream.openStreams() === 2 && published < 6_000) {
        for (let burst = 0; burst < 2; burst++) {
          kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(published, delta));
          published++;
        }
        await Bun.sleep(1);
      }
      expect(kit.stream.openStreams()).toBe(1);
      expect(kit.bus.activeSubscriptions()).toBe(1);
      expect(kit.metrics.closed).toBe(1);
      expect(kit.logs.some((entry) => entry.message === "dropping slow SSE subscriber")).toBe(true);

      // The fast subscriber was never held back: it gets every event, in order.
      kit.services.events.publish(kit.tenantA.id, thread, tokenEvent(published, "after the drop"));
      const messages = await fast.waitForMessages(published + 2, 20_000);
      expect(messages.slice(1).map((message) => JSON.parse(message.data).index)).toEqual(
        Array.from({ length: published + 1 }, (_, index) => index),
      );
      await fast.close();

      // Once the stalled client reads again it finds the end event after what was already sent.
      let text = "";
      stalled.on("data", (chunk: Buffer) => {
        text += chunk.toString("latin1");
      });
      stalled.resume();
      await waitFor(() => text.includes("event: end"), "the stalled client to read its end event", 20_000);
      expect(text).toContain('event: end\ndata: {"reason":"slow_consumer"}');
      stalled.destroy();
    },
    { timeout: 60_000 },
  );
});
