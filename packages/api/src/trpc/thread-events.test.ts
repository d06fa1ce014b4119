import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StreamEvent } from "@promptrun/contract";
import { waitFor } from "@promptrun/core/testing";
import { createTRPCClient, httpSubscriptionLink, type TRPCClientError } from "@trpc/client";
import { EventSource } from "eventsource";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import type { AppRouter } from "./index.ts";

/**
 * The whole app (SSE and tRPC behind one per-thread cap of 2) on a real socket: the cap is
 * shared by GET /stream/:thread and thread.onEvents, keyed by (tenant, thread).
 */
describe("thread.onEvents behind the per-thread stream cap", () => {
  let t: TestApp;
  let server: ReturnType<typeof Bun.serve>;
  let url: string;
  beforeAll(async () => {
    t = await createTestApp({ app: { maxStreamsPerThread: 2 } });
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request, bunServer) => t.app.fetch(request, bunServer),
    });
    url = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await t.dispose();
    await server.stop(true);
  });

  const mint = async (key: string, thread: string) => {
    const tenant = await t.services.auth.authenticate(`Bearer ${key}`);
    return (await t.services.streamTokens.issue(tenant, thread)).token;
  };

  const client = () =>
    createTRPCClient<AppRouter>({ links: [httpSubscriptionLink({ url: `${url}/trpc`, EventSource })] });

  /** Subscribes over SSE and records what the client sees. */
  function subscribe(thread: string, token: string) {
    const received: StreamEvent[] = [];
    const state: { error: TRPCClientError<AppRouter> | null; completed: boolean } = {
      error: null,
      completed: false,
    };
    const subscription = client().thread.onEvents.subscribe(
      { thread, token },
      {
        onData: (message) => {
          received.push(message.data);
        },
        onError: (error) => {
          state.error = error;
        },
        onComplete: () => {
          state.completed = true;
        },
      },
    );
    const ready = () => received[0]?.type === "ready";
    return { received, state, ready, unsubscribe: () => subscription.unsubscribe() };
  }

  async function subscribed(thread: string, token: string) {
    const subscriber = subscribe(thread, token);
    await waitFor(() => subscriber.ready() || subscriber.state.error !== null, "ready or an error");
    expect(subscriber.state.error).toBeNull();
    return subscriber;
  }

  async function refused(thread: string, token: string) {
    const subscriber = subscribe(thread, token);
    await waitFor(() => subscriber.state.error !== null || subscriber.ready(), "an error or ready");
    subscriber.unsubscribe();
    expect(subscriber.received).toEqual([]);
    return subscriber.state.error;
  }

  const openSse = (thread: string, token: string) =>
    fetch(`${url}/stream/${thread}`, { headers: { authorization: `Bearer ${token}` } });

  /** Opens an SSE stream as soon as a slot is free (release is asynchronous after an unsubscribe). */
  async function openSseOnceFree(thread: string, token: string): Promise<Response> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const response = await openSse(thread, token);
      if (response.status === 200) return response;
      await response.body?.cancel();
      if (Date.now() > deadline) throw new Error(`no slot freed (last status ${response.status})`);
      await Bun.sleep(10);
    }
  }

  test("SSE streams and subscriptions share one counter; past it TOO_MANY_REQUESTS / 429", async () => {
    const thread = crypto.randomUUID();
    const token = await mint(t.keys.a, thread);
    const sse = await openSse(thread, token);
    expect(sse.status).toBe(200);
    const first = await subscribed(thread, token);

    const error = await refused(thread, token);
    expect(error?.data?.code).toBe("TOO_MANY_REQUESTS");
    expect(error?.data?.errorCode).toBe("rate_limited");
    expect(error?.data?.retryAfterSeconds).toBe(5);
    expect(error?.message).toBe("too many open streams on this thread");
    expect((await openSse(thread, token)).status).toBe(429);

    // The same thread id of another tenant, and another thread, have slots of their own.
    const otherTenant = await subscribed(thread, await mint(t.keys.b, thread));
    const otherThread = crypto.randomUUID();
    const elsewhere = await subscribed(otherThread, await mint(t.keys.a, otherThread));

    // Closing the SSE stream frees a slot a subscription can take; refused attempts took none.
    await sse.body?.cancel();
    const second = await (async () => {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const attempt = subscribe(thread, token);
        await waitFor(() => attempt.ready() || attempt.state.error !== null, "ready or an error");
        if (attempt.ready()) return attempt;
        attempt.unsubscribe();
        if (Date.now() > deadline) throw new Error("the SSE slot was never freed");
        await Bun.sleep(10);
      }
    })();
    expect((await refused(thread, token))?.data?.code).toBe("TOO_MANY_REQUESTS");

    for (const subscriber of [first, second, otherTenant, elsewhere]) subscriber.unsubscribe();
    // Both slots come back once the subscriptions are gone.
    const reopened = [await openSseOnceFree(thread, token), await openSseOnceFree(thread, token)];
    expect((await openSse(thread, token)).status).toBe(429);
    for (const response of reopened) await response.body?.cancel();
  });

  test("a subscription ended by the server (shutdown) frees its slot", async () => {
    const thread = crypto.randomUUID();
    const token = await mint(t.keys.a, thread);
    const subscribers = [await subscribed(thread, token), await subscribed(thread, token)];
    expect((await openSse(thread, token)).status).toBe(429);

    t.app.closeAllStreams("shutdown");
    await waitFor(() => subscribers.every((subscriber) => subscriber.state.completed), "both to complete");
    for (const subscriber of subscribers)
      expect(subscriber.received.at(-1)).toEqual({ type: "end", data: { reason: "shutdown" } });
    const reopened = [await openSseOnceFree(thread, token), await openSseOnceFree(thread, token)];
    expect((await openSse(thread, token)).status).toBe(429);
    for (const response of reopened) await response.body?.cancel();
  });

  test("a subscription whose client goes away (abort) frees its slot", async () => {
    const thread = crypto.randomUUID();
    const token = await mint(t.keys.a, thread);
    const held = await openSse(thread, token);
    expect(held.status).toBe(200);
    const subscriber = await subscribed(thread, token);
    expect((await refused(thread, token))?.data?.code).toBe("TOO_MANY_REQUESTS");

    subscriber.unsubscribe();
    const taken = await openSseOnceFree(thread, token);
    expect((await openSse(thread, token)).status).toBe(429);
    for (const response of [held, taken]) await response.body?.cancel();
  });
});
