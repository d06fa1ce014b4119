import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { act, renderHook, waitFor } from "@testing-library/react";
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

/**
 * Replaces requestAnimationFrame with frames the test fires by hand, as a busy browser would
 * paint late; `absent` removes it instead (the setTimeout fallback).
 */
function holdFrames(options: { absent?: boolean } = {}) {
  const original = {
    request: globalThis.requestAnimationFrame,
    cancel: globalThis.cancelAnimationFrame,
  };
  const waiting = new Map<number, FrameRequestCallback>();
  let nextId = 1;
  const globals = globalThis as { requestAnimationFrame?: unknown; cancelAnimationFrame?: unknown };
  if (options.absent) {
    delete globals.requestAnimationFrame;
    delete globals.cancelAnimationFrame;
  } else {
    globalThis.requestAnimationFrame = (callback) => {
      waiting.set(nextId, callback);
      return nextId++;
    };
    globalThis.cancelAnimationFrame = (id) => void waiting.delete(id);
  }
  return {
    get requested() {
      return waiting.size;
    },
    fire() {
      const callbacks = [...waiting.values()];
      waiting.clear();
      for (const callback of callbacks) callback(performance.now());
    },
    restore() {
      globalThis.requestAnimationFrame = original.request;
      globalThis.cancelAnimationFrame = original.cancel;
    },
  };
}

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

  test("a completed run keeps outputJson, finishReason and memory of its run.completed event", async () => {
    const { result, backend, thread } = renderStream();
    await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
    const text = backend.createRun({ thread, message: "plain words" });
    const { id: textId } = await text;
    const { id } = await backend.createRun({ thread, message: 'json:{"name":"Ada"}' });
    await waitFor(() => expect(result.current.runs[id]?.status).toBe("completed"), waitOptions);
    expect(result.current.runs[id]).toMatchObject({
      text: '{"name":"Ada"}',
      outputJson: { name: "Ada" },
      finishReason: "stop",
      memory: { messages: 2, dropped: 1 },
    });
    await waitFor(() => expect(result.current.runs[textId]?.status).toBe("completed"), waitOptions);
    expect(result.current.runs[textId]).toMatchObject({ outputJson: null, finishReason: "stop" });
  });

  test("a burst of 100 tokens renders once per animation frame, and a failed run keeps every token", async () => {
    const frames = holdFrames();
    try {
      // delayMs 1: each token reaches the client on its own, ~100 separate arrivals.
      const { backend } = fakeBackend(fake, { delayMs: 1 });
      const thread = crypto.randomUUID();
      let renders = 0;
      const { result } = renderHook(
        () => {
          renders += 1;
          return useThreadStream(thread, fastRetry);
        },
        { wrapper: providerFor(backend) },
      );
      await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
      const words = Array.from({ length: 100 }, (_, index) => `w${index} `);
      const rendersBefore = renders;
      // run.failed carries no output: the text shown is only what the token events built.
      const { id } = await backend.createRun({ thread, message: `fail:${words.join("")}` });

      await waitFor(() => expect(frames.requested).toBe(1), waitOptions);
      act(() => frames.fire());
      const shown = result.current.runs[id]?.text ?? "";
      expect(shown.length).toBeGreaterThan(0);
      expect(words.join("").startsWith(shown)).toBe(true);

      await waitFor(() => expect(result.current.runs[id]?.status).toBe("failed"), waitOptions);
      expect(result.current.runs[id]?.text).toBe(words.join(""));
      // run.started, the one frame fired, run.failed (with the tokens held since): not one per token.
      expect(renders - rendersBefore).toBeLessThanOrEqual(5);
    } finally {
      frames.restore();
    }
  });

  test("without requestAnimationFrame, tokens still show while the run streams", async () => {
    const frames = holdFrames({ absent: true });
    try {
      expect(typeof globalThis.requestAnimationFrame).toBe("undefined");
      const { result, backend, thread } = renderStream({ delayMs: 40 });
      await waitFor(() => expect(result.current.status).toBe("open"), waitOptions);
      const { id } = await backend.createRun({ thread, message: "one two three four" });
      await waitFor(() => expect(result.current.runs[id]?.text).toBe("one two "), waitOptions);
      expect(result.current.runs[id]?.status).toBe("streaming");
      await waitFor(() => expect(result.current.runs[id]?.status).toBe("completed"), waitOptions);
    } finally {
      frames.restore();
    }
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
