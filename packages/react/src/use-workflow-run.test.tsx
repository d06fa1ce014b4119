import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { WorkflowRun, WorkflowStepStatus } from "@promptrun/contract";
import { act, renderHook, waitFor } from "@testing-library/react";
import { createBackend } from "./backend.ts";
import { type FakeServerHandle, startFakeServer } from "./test-support/fake-server.ts";
import { fakeBackend, providerFor, type WorkflowRunVariables, waitOptions } from "./test-support/render.tsx";
import { applyWorkflowStepEvent, useCreateWorkflowRun, useWorkflowRun } from "./use-workflow-run.ts";

setDefaultTimeout(20_000);

let fake: FakeServerHandle;
beforeAll(async () => {
  fake = await startFakeServer();
});
afterAll(() => fake.stop());

/** A poll interval no test waits for: only the stream can bring the changes in. */
const streamOnly = { intervalMs: 60_000 };

describe("useWorkflowRun", () => {
  test("follows the workflow run through its thread's events, then stops streaming", async () => {
    const { backend, calls } = fakeBackend(fake, { delayMs: 100 });
    const thread = crypto.randomUUID();
    const { id } = await backend.createWorkflowRun!({ thread, steps: ["one two three", "four five six"] });
    const secondStepSeen = new Set<string>();
    const { result } = renderHook(
      () => {
        const state = useWorkflowRun(id, streamOnly);
        const second = state.steps[1];
        if (second) secondStepSeen.add(second.status);
        return state;
      },
      { wrapper: providerFor(backend) },
    );
    expect(result.current.status).toBe("loading");
    await waitFor(() => expect(result.current.status).toBe("pending"), waitOptions);
    await waitFor(() => expect(result.current.status).toBe("completed"), waitOptions);
    // The second step started after the subscription opened: its status changed before the end.
    expect(secondStepSeen).toContain("running");
    expect(result.current.workflowRun).toMatchObject({ id, thread, output: "four five six", phase: null });
    expect(result.current.steps.map((step) => [step.id, step.status, step.text])).toEqual([
      ["step_1", "completed", "one two three"],
      ["step_2", "completed", "four five six"],
    ]);
    expect(result.current.workflowRun?.cost?.total).toBeGreaterThan(0);
    // The subscription ends with the workflow run, and so do the reads.
    await waitFor(() => expect(result.current.connection).toBe("closed"), waitOptions);
    await waitFor(async () => expect(await fake.openStreams(thread)).toBe(0), waitOptions);
    const readsAtEnd = calls.getWorkflowRun;
    await Bun.sleep(200);
    expect(calls.getWorkflowRun).toBe(readsAtEnd);
  });

  test("a running step's text streams in before the step ends, from its first token", async () => {
    const { backend } = fakeBackend(fake, { delayMs: 60 });
    const answer = "alpha beta gamma delta epsilon";
    // The first step gives the subscription time to open before the second one starts.
    const { id } = await backend.createWorkflowRun!({ steps: ["wait a little here please", answer] });
    const partial: string[] = [];
    const { result } = renderHook(
      () => {
        const state = useWorkflowRun(id, streamOnly);
        const step = state.steps[1];
        if (step?.status === "running" && step.text) partial.push(step.text);
        return state;
      },
      { wrapper: providerFor(backend) },
    );
    await waitFor(() => expect(result.current.status).toBe("completed"), waitOptions);
    expect(partial.length).toBeGreaterThan(0);
    for (const text of partial) expect(answer.startsWith(text)).toBe(true);
    expect(partial.some((text) => text !== answer)).toBe(true);
    expect(result.current.steps[1]?.text).toBe(answer);
  });

  test("a failed step fails the workflow run: its error, the rest cancelled", async () => {
    const { backend } = fakeBackend(fake);
    const { id } = await backend.createWorkflowRun!({ steps: ["fine", "fail:nope", "never"] });
    const { result } = renderHook(() => useWorkflowRun(id, streamOnly), { wrapper: providerFor(backend) });
    await waitFor(() => expect(result.current.status).toBe("failed"), waitOptions);
    expect(result.current.workflowRun?.error).toBe("step 'step_2' failed: model exploded");
    await waitFor(
      () =>
        expect(result.current.steps.map((step) => step.status)).toEqual(["completed", "failed", "cancelled"]),
      waitOptions,
    );
    expect(result.current.error).toBeNull();
  });

  test("a step paused for tool outputs puts the workflow run in phase requires_action", async () => {
    const { backend } = fakeBackend(fake);
    const { id } = await backend.createWorkflowRun!({ steps: ["tool:get_local_time {}", "after"] });
    const { result } = renderHook(() => useWorkflowRun(id, streamOnly), { wrapper: providerFor(backend) });
    // Only the step run's run.requires_action event can bring the phase in (no workflow.* event says it).
    await waitFor(() => expect(result.current.phase).toBe("requires_action"), waitOptions);
    const stepRunId = result.current.steps[0]?.runId;
    expect(stepRunId).toBeString();
    await backend.submitToolOutputs?.(stepRunId!, [{ toolCallId: "call_1", output: "noon" }]);
    await waitFor(() => expect(result.current.status).toBe("completed"), waitOptions);
    expect(result.current.steps.map((step) => step.text)).toEqual(['Result: ["noon"]', "after"]);
  });

  test("an unknown workflow run is an error at once, without retries; no id does nothing", async () => {
    const { backend, calls } = fakeBackend(fake);
    const unknown = crypto.randomUUID();
    const { result } = renderHook(() => useWorkflowRun(unknown), { wrapper: providerFor(backend) });
    await waitFor(() => expect(result.current.status).toBe("error"), waitOptions);
    expect(result.current.error).toMatchObject({ status: 404, code: "not_found" });
    expect(calls.getWorkflowRun).toBe(1);
    const idle = renderHook(() => useWorkflowRun(null), { wrapper: providerFor(backend) });
    expect(idle.result.current.status).toBe("idle");
    expect(calls.getWorkflowRun).toBe(1);
  });

  test("useCreateWorkflowRun starts one through the backend; useWorkflowRun follows it", async () => {
    const { backend } = fakeBackend(fake);
    let id: string | null = null;
    const { result, rerender } = renderHook(
      () => ({ create: useCreateWorkflowRun<WorkflowRunVariables>(), run: useWorkflowRun(id, streamOnly) }),
      { wrapper: providerFor(backend) },
    );
    await act(async () => {
      id = (await result.current.create.mutateAsync({ steps: ["hi there"] })).id;
    });
    rerender();
    await waitFor(() => expect(result.current.run.status).toBe("completed"), waitOptions);
    expect(result.current.run.workflowRun?.output).toBe("hi there");
  });

  test("without getWorkflowRun on the backend, the hook says what to add", async () => {
    const backend = createBackend({ baseUrl: "/api" });
    const { getWorkflowRun: _, ...withoutIt } = backend;
    const id = crypto.randomUUID();
    const { result } = renderHook(() => useWorkflowRun(id), { wrapper: providerFor(withoutIt) });
    await waitFor(() => expect(result.current.status).toBe("error"), waitOptions);
    expect(result.current.error?.message).toContain("has no getWorkflowRun");
  });
});

describe("applyWorkflowStepEvent", () => {
  const run = {
    id: "0196f3c1-1f0e-7a3b-8b7c-1234567890a1",
    status: "pending",
    phase: "queued",
    steps: [
      { id: "a", status: "completed", runId: null },
      { id: "b", status: "pending", runId: null },
    ],
  } as unknown as WorkflowRun;
  const stepEvent = (step: string, status: WorkflowStepStatus, runId: string | null = null) => ({
    workflowRunId: run.id,
    step,
    status,
    runId,
  });

  test("a step moves forward only; a replayed older change or an unknown step changes nothing", () => {
    const runId = "0196f3c1-1f0e-7a3b-8b7c-1234567890a2";
    const running = applyWorkflowStepEvent(run, stepEvent("b", "running", runId));
    expect(running?.steps[1]).toMatchObject({ status: "running", runId });
    expect(running?.phase).toBe("running");
    expect(applyWorkflowStepEvent(running!, stepEvent("b", "completed"))?.steps[1]).toMatchObject({
      status: "completed",
      runId,
    });
    expect(applyWorkflowStepEvent(run, stepEvent("a", "running"))).toBeNull();
    expect(applyWorkflowStepEvent(run, stepEvent("missing", "running"))).toBeNull();
    expect(applyWorkflowStepEvent({ ...run, status: "failed" }, stepEvent("b", "running"))).toBeNull();
  });
});
