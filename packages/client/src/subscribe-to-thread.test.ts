import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StreamEnvelope, ThreadEvent } from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient } from "./promptrun-client.ts";
import { type ConnectionChange, subscribeToThread } from "./subscribe-to-thread.ts";
import { type FakePromptrunServer, startFakePromptrunServer } from "./testing/fake-promptrun-server.ts";

let server: FakePromptrunServer;
beforeAll(() => {
  server = startFakePromptrunServer();
});
afterAll(() => server.stop());

const client = () => createPromptrunClient({ baseUrl: server.url, apiKey: server.apiKey });
const fast = { initialRetryDelayMs: 20, maxRetryDelayMs: 100 };

const tokenEvent = (delta: string, index: number): ThreadEvent => ({
  type: "run.token",
  data: { runId: "0196f3c1-1f0e-7a3b-8b7c-1234567890ab", channel: "default", index, delta },
});

/** Runs `onEvent` for each event until it returns true; collects what arrived. */
async function collect(
  events: AsyncIterable<StreamEnvelope>,
  onEvent: (event: StreamEnvelope, all: StreamEnvelope[]) => boolean | Promise<boolean>,
): Promise<StreamEnvelope[]> {
  const all: StreamEnvelope[] = [];
  for await (const event of events) {
    all.push(event);
    if (await onEvent(event, all)) break;
  }
  return all;
}

const deltas = (events: StreamEnvelope[]) =>
  events.flatMap((event) => (event.type === "run.token" ? [event.data.delta] : []));

describe("subscribeToThread", () => {
  test("reconnects after a drop with Last-Event-ID and loses nothing", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await client().threads.createStreamToken(thread);
    let readies = 0;
    const events = await collect(subscribeToThread({ url, token, ...fast }), (event) => {
      if (event.type === "ready") {
        readies += 1;
        if (readies === 1) {
          server.publish(thread, tokenEvent("one ", 0));
          server.dropStreams();
          // Published while nobody is connected: only Last-Event-ID brings it back.
          server.publish(thread, tokenEvent("two", 1));
        }
      }
      return event.type === "run.token" && event.data.delta === "two";
    });
    expect(deltas(events)).toEqual(["one ", "two"]);
    const attempts = server.connections.filter((connection) => connection.thread === thread);
    expect(attempts.map((connection) => connection.lastEventId)).toEqual([null, "1"]);
    expect(events.map((event) => event.id)).toEqual(["0", "1", "1", "2"]);
  });

  test("refreshes the token through getToken when the server answers 401", async () => {
    const thread = crypto.randomUUID();
    let minted = 0;
    const getToken = () => {
      minted += 1;
      return client().threads.createStreamToken(thread);
    };
    let readies = 0;
    const events = await collect(subscribeToThread({ getToken, ...fast }), (event) => {
      if (event.type !== "ready") return event.type === "run.token";
      readies += 1;
      if (readies === 1) {
        server.expireTokens();
        server.dropStreams();
      } else server.publish(thread, tokenEvent("after refresh", 0));
      return false;
    });
    expect(deltas(events)).toEqual(["after refresh"]);
    expect(minted).toBe(2);
    const statuses = server.connections.filter((c) => c.thread === thread).map((c) => c.status);
    expect(statuses).toEqual([200, 401, 200]);
  });

  test("an `end` with token_expired refreshes the token and resumes at once", async () => {
    const thread = crypto.randomUUID();
    let minted = 0;
    const getToken = async () => {
      minted += 1;
      return (await client().threads.createStreamToken(thread)).token;
    };
    const { url } = await client().threads.createStreamToken(thread);
    let readies = 0;
    const events = await collect(subscribeToThread({ url, getToken, ...fast }), (event) => {
      if (event.type === "ready" && ++readies === 1) server.expireTokens({ end: true });
      if (event.type === "ready" && readies === 2) server.publish(thread, tokenEvent("resumed", 0));
      return event.type === "run.token";
    });
    expect(events.map((event) => event.type)).toEqual(["ready", "end", "ready", "run.token"]);
    expect(minted).toBe(2);
  });

  test("backs off through server errors and reports its connection state", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await client().threads.createStreamToken(thread);
    const changes: ConnectionChange[] = [];
    server.failNextStreamConnections(2, 503);
    await collect(
      subscribeToThread({ url, token, ...fast, onConnectionChange: (change) => changes.push(change) }),
      (event) => event.type === "ready",
    );
    expect(changes.map((change) => change.status)).toEqual([
      "connecting",
      "reconnecting",
      "reconnecting",
      "open",
      "closed",
    ]);
    expect(changes[1]?.error?.status).toBe(503);
    expect(changes[2]?.failures).toBe(2);
  });

  test("gives up after maxReconnectAttempts with the last error", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await client().threads.createStreamToken(thread);
    server.failNextStreamConnections(5, 503);
    const changes: ConnectionChange[] = [];
    const error = await collect(
      subscribeToThread({
        url,
        token,
        ...fast,
        maxReconnectAttempts: 2,
        onConnectionChange: (c) => changes.push(c),
      }),
      () => true,
    ).catch((caught: unknown) => caught);
    server.failNextStreamConnections(0, 503);
    expect(ApiError.isInstance(error) && error.status).toBe(503);
    expect(changes.at(-1)?.status).toBe("closed");
    expect(changes.at(-1)?.error?.status).toBe(503);
  });

  test("a token of another thread is refused for good (403)", async () => {
    const { token } = await client().threads.createStreamToken(crypto.randomUUID());
    const otherThread = crypto.randomUUID();
    const error = await collect(
      subscribeToThread({ url: `${server.url}/stream/${otherThread}`, token, ...fast }),
      () => true,
    ).catch((caught: unknown) => caught);
    expect(ApiError.isInstance(error) && error.code).toBe("forbidden");
  });

  test("without getToken, an expired token ends the subscription with 401", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await client().threads.createStreamToken(thread);
    server.expireTokens();
    const error = await collect(subscribeToThread({ url, token, ...fast }), () => true).catch(
      (caught: unknown) => caught,
    );
    expect(ApiError.isInstance(error) && error.status).toBe(401);
  });

  test("aborting the signal ends the iteration quietly and closes the connection", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = await client().threads.createStreamToken(thread);
    const controller = new AbortController();
    const events = await collect(subscribeToThread({ url, token, signal: controller.signal }), (event) => {
      if (event.type === "ready") controller.abort();
      return false;
    });
    expect(events.map((event) => event.type)).toEqual(["ready"]);
    // The server sees the connection go.
    const deadline = Date.now() + 5_000;
    while (server.openStreams() > 0 && Date.now() < deadline) await Bun.sleep(10);
    expect(server.openStreams()).toBe(0);
  });

  test("an event that breaks the contract ends the subscription with invalid_response", async () => {
    const body = 'id: 1\nevent: run.token\ndata: {"runId":"nope"}\n\n';
    const error = await collect(
      subscribeToThread({
        url: "http://promptrun.invalid/stream/x",
        token: "t",
        fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
      }),
      () => false,
    ).catch((caught: unknown) => caught);
    expect(ApiError.isInstance(error) && error.code).toBe("invalid_response");
  });
});
