import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { renderHook, waitFor } from "@testing-library/react";
import { type FakeServerHandle, startFakeServer } from "./test-support/fake-server.ts";
import { fakeBackend, providerFor, waitOptions } from "./test-support/render.tsx";
import { useThreadStream } from "./use-thread-stream.ts";

setDefaultTimeout(20_000);

let fake: FakeServerHandle;
beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.stop());

const fastRetry = { initialRetryDelayMs: 20, maxRetryDelayMs: 200 };

function renderStream(options: { delayMs?: number } = {}) {
  const { backend, calls } = fakeBackend(fake, options);
  const thread = crypto.randomUUID();
  const rendered = renderHook(() => useThreadStream(thread, fastRetry), { wrapper: providerFor(backend) });
  return { ...rendered, backend, calls, thread };
}

describe("useThreadStream", () => {
  test("connects, then streams a run's text before it completes, with usage and cost", async () => {
    const { result, backend, thread } = renderStream({ delayMs: 40 });
    expect(result.current.status).toBe("connecting");
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);

    const { id } = await backend.createRun({ thread, message: "one two three four" });
    await waitFor(() => expect(result.current.runs[id]?.text).toBe("one two "), waitOptions);
    expect(result.current.runs[id]?.status).toBe("streaming");
    expect(result.current.latestRun?.runId).toBe(id);

    await waitFor(() => expect(result.current.runs[id]?.status).toBe("completed"), waitOptions);
    const run = result.current.runs[id]!;
    expect(run.text).toBe("one two three four");
    expect(run.tokenUsage?.output).toBe(4);
    expect(run.cost?.total).toBeGreaterThan(0);
  });

  test("a failed run carries its error and cost", async () => {
    const { result, backend, thread } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    const { id } = await backend.createRun({ thread, message: "fail:half an answer" });
    await waitFor(() => expect(result.current.runs[id]?.status).toBe("failed"), waitOptions);
    expect(result.current.runs[id]).toMatchObject({ error: "model exploded", text: "half an answer" });
    expect(result.current.runs[id]?.cost).not.toBeNull();
  });

  test("a provider retry restarts the run's text instead of duplicating it", async () => {
    const { result, backend, thread } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    const { id } = await backend.createRun({ thread, message: "retry:a b c d" });
    await waitFor(() => expect(result.current.runs[id]?.status).toBe("completed"), waitOptions);
    expect(result.current.runs[id]).toMatchObject({ text: "a b c d", attempt: 2 });
  });

  test("reconnects after a dropped connection and resumes with Last-Event-ID", async () => {
    const { result, backend, thread } = renderStream({ delayMs: 30 });
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    const { id } = await backend.createRun({ thread, message: "w1 w2 w3 w4 w5 w6 w7 w8" });
    await waitFor(() => expect(result.current.runs[id]?.nextTokenIndex).toBeGreaterThan(1), waitOptions);
    await fake.dropStreams();
    await waitFor(() => expect(result.current.runs[id]?.status).toBe("completed"), waitOptions);
    expect(result.current.runs[id]?.text).toBe("w1 w2 w3 w4 w5 w6 w7 w8");
    expect(result.current.status).toBe("open");
    const connections = (await fake.connections()).filter((connection) => connection.thread === thread);
    expect(connections.length).toBe(2);
    expect(connections[0]?.lastEventId).toBeNull();
    expect(Number(connections[1]?.lastEventId)).toBeGreaterThan(1);
  });

  test("refreshes the token when the server ends the stream with token_expired", async () => {
    const { result, calls } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    expect(calls.getStreamToken).toBe(1);
    await fake.expireTokens({ end: true });
    await waitFor(() => expect(calls.getStreamToken).toBe(2), waitOptions);
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    expect(result.current.error).toBeNull();
  });

  test("refreshes the token when a reconnect is answered 401", async () => {
    const { result, calls, thread } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    await fake.expireTokens();
    await fake.dropStreams();
    await waitFor(() => expect(calls.getStreamToken).toBe(2), waitOptions);
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    const statuses = (await fake.connections()).filter((c) => c.thread === thread).map((c) => c.status);
    expect(statuses).toEqual([200, 401, 200]);
  });

  test("shows reconnecting with the error while the server fails, then recovers", async () => {
    await fake.failNextStreamConnections(3, 503);
    const { result } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("reconnecting"), waitOptions);
    expect(result.current.error?.status).toBe(503);
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    expect(result.current.error).toBeNull();
  });

  test("a refused token (403) closes the stream with the error", async () => {
    const { backend } = fakeBackend(fake);
    const thread = crypto.randomUUID();
    // A token minted for another thread, presented on this thread's URL.
    const wrongBackend = {
      ...backend,
      getStreamToken: async () => ({
        ...(await backend.getStreamToken(crypto.randomUUID())),
        url: `${fake.url}/stream/${thread}`,
      }),
    };
    const { result } = renderHook(() => useThreadStream(thread, fastRetry), {
      wrapper: providerFor(wrongBackend),
    });
    await waitFor(() => expect(result.current.status).toBe("closed"), waitOptions);
    expect(result.current.error?.code).toBe("forbidden");
  });

  test("stays closed without a thread, and disconnects on unmount", async () => {
    const { backend } = fakeBackend(fake);
    const idle = renderHook(() => useThreadStream(null), { wrapper: providerFor(backend) });
    await waitFor(() => expect(idle.result.current.status).toBe("closed"), waitOptions);

    const { result, unmount, thread } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    expect(await fake.openStreams(thread)).toBe(1);
    unmount();
    await waitFor(async () => expect(await fake.openStreams(thread)).toBe(0), waitOptions);
  });
});
