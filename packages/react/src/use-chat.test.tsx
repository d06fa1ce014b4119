import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ApiError } from "@promptrun/client";
import { act, renderHook, waitFor } from "@testing-library/react";
import { type FakeServerHandle, startFakeServer } from "./test-support/fake-server.ts";
import { fakeBackend, providerFor, waitOptions } from "./test-support/render.tsx";
import { useChat } from "./use-chat.ts";
import type { ChatRunVariables } from "./use-create-run.ts";

setDefaultTimeout(20_000);

let fake: FakeServerHandle;
beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.stop());

describe("useChat", () => {
  test("streams each answer, then shows usage and cost; turns share the thread", async () => {
    const { backend, calls } = fakeBackend(fake, { delayMs: 40 });
    // Every status the answer shows, in render order: a busy machine may render the streaming
    // state only briefly, so it is recorded as rendered rather than polled for.
    const statuses: string[] = [];
    const { result } = renderHook(
      () => {
        const chat = useChat({ channel: "support" });
        const answer = chat.messages[1];
        const status = answer?.role === "assistant" ? answer.status : undefined;
        if (status !== undefined && statuses.at(-1) !== status) statuses.push(status);
        return chat;
      },
      { wrapper: providerFor(backend) },
    );

    let sent: Promise<void> = Promise.resolve();
    act(() => {
      sent = result.current.send("first question here");
    });
    expect(result.current.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(result.current.messages[1]).toMatchObject({ status: "pending", content: "" });
    expect(result.current.isBusy).toBe(true);
    await act(() => sent);

    await waitFor(
      () => expect(result.current.messages[1]).toMatchObject({ status: "completed" }),
      waitOptions,
    );
    expect(statuses).toEqual(["pending", "streaming", "completed"]);
    const answer = result.current.messages[1];
    expect(answer?.content).toBe("first question here");
    expect(answer?.role === "assistant" && answer.cost?.total).toBeGreaterThan(0);
    expect(answer?.role === "assistant" && answer.tokenUsage?.output).toBe(3);
    expect(result.current.isBusy).toBe(false);

    await act(() => result.current.send("second"));
    await waitFor(
      () => expect(result.current.messages[3]).toMatchObject({ status: "completed" }),
      waitOptions,
    );
    expect(result.current.messages.map((message) => message.content)).toEqual([
      "first question here",
      "first question here",
      "second",
      "second",
    ]);
    const bodies = calls.createRun as ChatRunVariables[];
    expect(bodies.map((body) => body.thread)).toEqual([result.current.thread, result.current.thread]);
    expect(bodies[0]).toEqual({
      thread: result.current.thread,
      channel: "support",
      message: "first question here",
    });
  });

  test("a run that fails shows its error", async () => {
    const { backend } = fakeBackend(fake);
    const { result } = renderHook(() => useChat(), { wrapper: providerFor(backend) });
    await act(() => result.current.send("fail:oh no"));
    await waitFor(() => expect(result.current.messages[1]).toMatchObject({ status: "failed" }), waitOptions);
    expect(result.current.messages[1]).toMatchObject({ error: "model exploded" });
  });

  test("a backend that refuses the message marks the answer failed with its message", async () => {
    const { backend } = fakeBackend(fake);
    const refusing = {
      ...backend,
      createRun: async () => {
        throw new ApiError(429, "rate_limited", "too many messages");
      },
    };
    const { result } = renderHook(() => useChat(), { wrapper: providerFor(refusing) });
    await act(() => result.current.send("hello"));
    expect(result.current.messages[1]).toMatchObject({ status: "failed", error: "too many messages" });
  });

  test("while the stream is down, answers are polled instead", async () => {
    const { backend, calls } = fakeBackend(fake, { delayMs: 5 });
    const noStream = {
      ...backend,
      getStreamToken: async () => {
        throw new ApiError(403, "forbidden", "streaming disabled");
      },
    };
    const { result } = renderHook(() => useChat({ openTimeoutMs: 50, fallbackPollMs: 30 }), {
      wrapper: providerFor(noStream),
    });
    await waitFor(() => expect(result.current.stream.status).toBe("closed"), waitOptions);
    await act(() => result.current.send("polled answer"));
    await waitFor(
      () => expect(result.current.messages[1]).toMatchObject({ status: "completed" }),
      waitOptions,
    );
    expect(result.current.messages[1]?.content).toBe("polled answer");
    expect(calls.getRun).toBeGreaterThan(0);
  });

  test("a JSON answer keeps outputJson, finishReason and memory from run.completed", async () => {
    const { backend } = fakeBackend(fake);
    const { result } = renderHook(() => useChat(), { wrapper: providerFor(backend) });
    await waitFor(() => expect(result.current.stream.status).toBe("open"), waitOptions);
    expect(result.current.messages).toEqual([]);
    let sent: Promise<void> = Promise.resolve();
    act(() => {
      sent = result.current.send('json:{"name":"Ada","topics":["engines"]}');
    });
    expect(result.current.messages[1]).toMatchObject({ outputJson: null, finishReason: null, memory: null });
    await act(() => sent);
    await waitFor(
      () => expect(result.current.messages[1]).toMatchObject({ status: "completed" }),
      waitOptions,
    );
    expect(result.current.messages[1]).toMatchObject({
      content: '{"name":"Ada","topics":["engines"]}',
      outputJson: { name: "Ada", topics: ["engines"] },
      finishReason: "stop",
      memory: { messages: 2, dropped: 1 },
    });
  });

  test("a polled JSON answer (stream down) has the same fields, read from the run", async () => {
    const { backend } = fakeBackend(fake, { delayMs: 5 });
    const noStream = {
      ...backend,
      getStreamToken: async () => {
        throw new ApiError(403, "forbidden", "streaming disabled");
      },
    };
    const { result } = renderHook(() => useChat({ openTimeoutMs: 50, fallbackPollMs: 30 }), {
      wrapper: providerFor(noStream),
    });
    await waitFor(() => expect(result.current.stream.status).toBe("closed"), waitOptions);
    await act(() => result.current.send('json:{"score":3}'));
    await waitFor(
      () => expect(result.current.messages[1]).toMatchObject({ status: "completed" }),
      waitOptions,
    );
    expect(result.current.messages[1]).toMatchObject({
      outputJson: { score: 3 },
      finishReason: "stop",
      memory: { messages: 2, dropped: 1 },
    });
  });

  test("newThread starts over on a fresh thread", async () => {
    const { backend } = fakeBackend(fake);
    const { result } = renderHook(() => useChat(), { wrapper: providerFor(backend) });
    await act(() => result.current.send("hi"));
    const before = result.current.thread;
    act(() => result.current.newThread());
    expect(result.current.thread).not.toBe(before);
    expect(result.current.messages).toEqual([]);
    await waitFor(() => expect(result.current.stream.status).toBe("open"), waitOptions);
  });
});
