import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ApiError } from "@promptrun/client";
import type { ToolCall } from "@promptrun/contract";
import { act, renderHook, waitFor } from "@testing-library/react";
import { type FakeServerHandle, startFakeServer } from "./test-support/fake-server.ts";
import { fakeBackend, providerFor, waitOptions } from "./test-support/render.tsx";
import { useChat } from "./use-chat.ts";

setDefaultTimeout(20_000);

let fake: FakeServerHandle;
beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.stop());

const assistant = (messages: ReturnType<typeof useChat>["messages"], index = 1) => {
  const message = messages[index];
  if (message?.role !== "assistant") throw new Error(`message ${index} is not an answer`);
  return message;
};

describe("useChat with client tools", () => {
  test("onToolCall answers each call in the browser; the outputs go through the backend once", async () => {
    const { backend, calls } = fakeBackend(fake);
    const seen: Array<[ToolCall, { id: string }]> = [];
    const onToolCall = async (toolCall: ToolCall, run: { id: string }) => {
      seen.push([toolCall, run]);
      return toolCall.name === "get_local_time" ? { time: "12:00", zone: "Europe/Paris" } : "shipped";
    };
    const { result } = renderHook(() => useChat({ onToolCall }), { wrapper: providerFor(backend) });
    await act(() => result.current.send('tool:lookup_order {"number":"A-1"} | get_local_time {}'));
    await waitFor(() => expect(assistant(result.current.messages).status).toBe("completed"), waitOptions);

    const answer = assistant(result.current.messages);
    expect(answer.content).toBe('Result: ["shipped",{"time":"12:00","zone":"Europe/Paris"}]');
    expect(seen).toEqual([
      [{ id: "call_1", name: "lookup_order", arguments: { number: "A-1" } }, { id: answer.runId! }],
      [{ id: "call_2", name: "get_local_time", arguments: {} }, { id: answer.runId! }],
    ]);
    expect(calls.submitToolOutputs).toEqual([
      {
        runId: answer.runId,
        toolOutputs: [
          { toolCallId: "call_1", output: "shipped" },
          { toolCallId: "call_2", output: { time: "12:00", zone: "Europe/Paris" } },
        ],
      },
    ]);
    // Render-friendly parts: the first step's text, both calls with their outputs, the answer.
    expect(
      answer.parts.map((part) => (part.type === "text" ? part.text : [part.name, part.state, part.output])),
    ).toEqual([
      "Checking.",
      ["lookup_order", "done", "shipped"],
      ["get_local_time", "done", { time: "12:00", zone: "Europe/Paris" }],
      'Result: ["shipped",{"time":"12:00","zone":"Europe/Paris"}]',
    ]);
    expect(result.current.pendingToolCalls).toEqual([]);
    expect(result.current.isBusy).toBe(false);
  });

  test("a throwing onToolCall is submitted as {error: message}", async () => {
    const { backend } = fakeBackend(fake);
    const onToolCall = () => {
      throw new Error("no clock here");
    };
    const { result } = renderHook(() => useChat({ onToolCall }), { wrapper: providerFor(backend) });
    await act(() => result.current.send("tool:get_local_time {}"));
    await waitFor(() => expect(assistant(result.current.messages).status).toBe("completed"), waitOptions);
    expect(assistant(result.current.messages).content).toBe('Result: [{"error":"no clock here"}]');
  });

  test("without onToolCall: the paused call is pending until submitToolOutputs answers it", async () => {
    const { backend, calls } = fakeBackend(fake);
    const { result } = renderHook(() => useChat(), { wrapper: providerFor(backend) });
    await act(() => result.current.send('tool:approve_refund {"amount":20}'));
    await waitFor(() => expect(result.current.pendingToolCalls).toHaveLength(1), waitOptions);
    const answer = assistant(result.current.messages);
    expect(answer.status).toBe("requires_action");
    expect(result.current.isBusy).toBe(true);
    expect(result.current.pendingToolCalls).toEqual([
      { id: "call_1", name: "approve_refund", arguments: { amount: 20 }, runId: answer.runId! },
    ]);
    expect(answer.parts.at(-1)).toMatchObject({
      type: "tool-call",
      name: "approve_refund",
      state: "awaiting-output",
    });

    // An id the chat is not waiting for is refused before anything is sent.
    await expect(result.current.submitToolOutputs([{ toolCallId: "call_9", output: 1 }])).rejects.toThrow(
      "no pending tool call with id call_9",
    );
    await act(() => result.current.submitToolOutputs([{ toolCallId: "call_1", output: { approved: true } }]));
    expect(result.current.pendingToolCalls).toEqual([]);
    await waitFor(() => expect(assistant(result.current.messages).status).toBe("completed"), waitOptions);
    expect(assistant(result.current.messages).content).toBe('Result: [{"approved":true}]');
    expect(calls.submitToolOutputs).toHaveLength(1);
  });

  test("the backend's refusal reaches the caller of submitToolOutputs, and the call stays pending", async () => {
    const { backend } = fakeBackend(fake);
    const refusing = {
      ...backend,
      submitToolOutputs: async () => {
        throw new ApiError(
          409,
          "conflict",
          "tool outputs were not submitted before 2026-01-01T00:00:00.000Z",
        );
      },
    };
    const { result } = renderHook(() => useChat(), { wrapper: providerFor(refusing) });
    await act(() => result.current.send("tool:approve_refund {}"));
    await waitFor(() => expect(result.current.pendingToolCalls).toHaveLength(1), waitOptions);
    await expect(
      result.current.submitToolOutputs([{ toolCallId: "call_1", output: true }]),
    ).rejects.toMatchObject({ status: 409, code: "conflict" });
    expect(result.current.pendingToolCalls).toHaveLength(1);
  });

  test("onToolCall whose outputs cannot be submitted shows why on the answer", async () => {
    const { backend } = fakeBackend(fake);
    const { submitToolOutputs: _none, ...withoutSubmit } = backend;
    const { result } = renderHook(() => useChat({ onToolCall: () => "x" }), {
      wrapper: providerFor(withoutSubmit),
    });
    await act(() => result.current.send("tool:get_local_time {}"));
    await waitFor(
      () => expect(assistant(result.current.messages).error).toContain("no submitToolOutputs"),
      waitOptions,
    );
    expect(assistant(result.current.messages).status).toBe("requires_action");
  });

  test("while the stream is down, a paused run is polled and still answered", async () => {
    const { backend, calls } = fakeBackend(fake);
    const noStream = {
      ...backend,
      getStreamToken: async () => {
        throw new ApiError(403, "forbidden", "streaming disabled");
      },
    };
    const { result } = renderHook(
      () => useChat({ openTimeoutMs: 50, fallbackPollMs: 30, onToolCall: () => "polled" }),
      { wrapper: providerFor(noStream) },
    );
    await waitFor(() => expect(result.current.stream.status).toBe("closed"), waitOptions);
    await act(() => result.current.send("tool:get_local_time {}"));
    await waitFor(() => expect(assistant(result.current.messages).status).toBe("completed"), waitOptions);
    const answer = assistant(result.current.messages);
    expect(answer.content).toBe('Result: ["polled"]');
    // Read from the run's steps: the call and its stored output.
    expect(answer.parts.find((part) => part.type === "tool-call")).toMatchObject({
      name: "get_local_time",
      state: "done",
      output: "polled",
    });
    expect(calls.submitToolOutputs).toHaveLength(1);
  });
});
