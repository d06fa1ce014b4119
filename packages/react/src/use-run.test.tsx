import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { renderHook, waitFor } from "@testing-library/react";
import { type FakeServerHandle, startFakeServer } from "./test-support/fake-server.ts";
import { fakeBackend, providerFor, waitOptions } from "./test-support/render.tsx";
import { useRun } from "./use-run.ts";
import { useThreadStream } from "./use-thread-stream.ts";

setDefaultTimeout(20_000);

let fake: FakeServerHandle;
beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.stop());

describe("useRun", () => {
  test("loads, polls while pending, and stops polling once completed", async () => {
    const { backend, calls } = fakeBackend(fake, { delayMs: 50 });
    const { id } = await backend.createRun({ thread: crypto.randomUUID(), message: "a b c d e" });
    const { result } = renderHook(() => useRun(id, { intervalMs: 30 }), { wrapper: providerFor(backend) });
    expect(result.current.isLoading).toBe(true);
    await waitFor(() => expect(result.current.data?.status).toBe("pending"), waitOptions);
    await waitFor(() => expect(result.current.data?.status).toBe("completed"), waitOptions);
    expect(result.current.data?.output).toBe("a b c d e");
    expect(calls.getRun).toBeGreaterThan(2);
    const callsAtCompletion = calls.getRun;
    // Several poll intervals later, nothing more was fetched.
    await Bun.sleep(200);
    expect(calls.getRun).toBe(callsAtCompletion);
  });

  test("exposes the structured-output fields of the run (typed by its parameter)", async () => {
    const { backend } = fakeBackend(fake);
    const { id } = await backend.createRun({ thread: crypto.randomUUID(), message: 'json:{"score":7}' });
    const { result } = renderHook(() => useRun<{ score: number }>(id, { intervalMs: 20 }), {
      wrapper: providerFor(backend),
    });
    await waitFor(() => expect(result.current.data?.status).toBe("completed"), waitOptions);
    const run = result.current.data!;
    const score: number | undefined = run.outputJson?.score;
    expect(score).toBe(7);
    expect(run).toMatchObject({ finishReason: "stop", phase: null, memory: { messages: 2, dropped: 1 } });
  });

  test("an unknown run is an error at once, without retries", async () => {
    const { backend, calls } = fakeBackend(fake);
    const id = crypto.randomUUID();
    const { result } = renderHook(() => useRun(id), { wrapper: providerFor(backend) });
    await waitFor(() => expect(result.current.isError).toBe(true), waitOptions);
    expect(result.current.error).toMatchObject({ status: 404, code: "not_found" });
    expect(calls.getRun).toBe(1);
  });

  test("does nothing without an id", () => {
    const { backend, calls } = fakeBackend(fake);
    const { result } = renderHook(() => useRun(null), { wrapper: providerFor(backend) });
    expect(result.current.fetchStatus).toBe("idle");
    expect(calls.getRun).toBe(0);
  });

  test("a thread stream on the same provider refreshes the run the moment it ends", async () => {
    const { backend } = fakeBackend(fake, { delayMs: 20 });
    const thread = crypto.randomUUID();
    let runId: string | null = null;
    const { result, rerender } = renderHook(
      () => ({ stream: useThreadStream(thread), run: useRun(runId, { intervalMs: 60_000 }) }),
      { wrapper: providerFor(backend) },
    );
    await waitFor(() => expect(result.current.stream.status).toBe("open"), waitOptions);
    runId = (await backend.createRun({ thread, message: "x y z" })).id;
    rerender();
    await waitFor(() => expect(result.current.run.data?.status).toBe("pending"), waitOptions);
    // The poll interval is a minute: only the stream's end event can bring this in.
    await waitFor(() => expect(result.current.run.data?.status).toBe("completed"), waitOptions);
  });

  test("a run paused for tool outputs shows phase requires_action, and is refreshed by the stream when it pauses", async () => {
    const { backend } = fakeBackend(fake, { delayMs: 5 });
    const thread = crypto.randomUUID();
    let runId: string | null = null;
    const { result, rerender } = renderHook(
      () => ({ stream: useThreadStream(thread), run: useRun(runId, { intervalMs: 60_000 }) }),
      { wrapper: providerFor(backend) },
    );
    await waitFor(() => expect(result.current.stream.status).toBe("open"), waitOptions);
    runId = (await backend.createRun({ thread, message: "tool:get_local_time {}" })).id;
    rerender();
    // The poll interval is a minute: the run.requires_action event brings the paused run in.
    await waitFor(() => expect(result.current.run.data?.phase).toBe("requires_action"), waitOptions);
    expect(result.current.run.data).toMatchObject({
      status: "pending",
      requiredAction: { type: "submit_tool_outputs", toolCalls: [{ id: "call_1", name: "get_local_time" }] },
    });
    await backend.submitToolOutputs?.(runId, [{ toolCallId: "call_1", output: "noon" }]);
    await waitFor(() => expect(result.current.run.data?.status).toBe("completed"), waitOptions);
    expect(result.current.run.data?.output).toBe('Result: ["noon"]');
  });
});
