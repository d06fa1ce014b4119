import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StreamEnvelope } from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { createPromptrunClient, type RunRequiringAction } from "./promptrun-client.ts";
import { type FakePromptrunServer, startFakePromptrunServer } from "./testing/fake-promptrun-server.ts";

const lookup = { id: "call_1", name: "lookup_order", arguments: { number: "A-1" } };
const clock = { id: "call_2", name: "get_local_time", arguments: {} };

let server: FakePromptrunServer;
beforeAll(() => {
  server = startFakePromptrunServer({
    script: (request) =>
      request.slug === "two-tools"
        ? {
            tokens: ["Let ", "me ", "check."],
            toolCalls: [lookup, clock],
            afterToolOutputs: (outputs) => ({ tokens: [`Order: ${JSON.stringify(outputs[0]?.output)}`] }),
          }
        : request.slug === "quick-expiry"
          ? { tokens: [], toolCalls: [clock], toolTimeoutSeconds: 0.05 }
          : { tokens: ["plain"] },
  });
});
afterAll(() => server.stop());

const client = () => createPromptrunClient({ baseUrl: server.url, apiKey: server.apiKey });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (ApiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("runs.submitToolOutputs and runs.wait", () => {
  test("wait returns a paused run as it is; submitToolOutputs continues it to its end", async () => {
    const { id } = await client().runs.create("two-tools", "latest", { inputs: {} });
    const paused = await client().runs.wait(id, { intervalMs: 10 });
    expect(paused).toMatchObject({ status: "pending", phase: "requires_action" });
    expect(paused.requiredAction?.toolCalls).toEqual([lookup, clock]);
    expect(paused.steps).toHaveLength(1);

    const answered = await client().runs.submitToolOutputs(
      id,
      [
        { toolCallId: "call_1", output: { status: "shipped" } },
        { toolCallId: "call_2", output: "12:00" },
      ],
      { idempotencyKey: "answer-1" },
    );
    expect(answered).toEqual({ id, thread: paused.thread });
    expect(server.toolOutputSubmissions.at(-1)).toMatchObject({ runId: id, idempotencyKey: "answer-1" });

    const done = await client().runs.wait(id, { intervalMs: 10 });
    expect(done).toMatchObject({ status: "completed", output: 'Order: {"status":"shipped"}', phase: null });
    expect(done.steps.map((step) => step.toolResults.map((result) => result.executedBy))).toEqual([
      ["client", "client"],
      [],
    ]);
  });

  test("wait answers each pause through onRequiresAction, once, and returns the ended run", async () => {
    const { id } = await client().runs.create("two-tools", "latest", { inputs: {} });
    const seen: RunRequiringAction[] = [];
    const run = await client().runs.wait(id, {
      intervalMs: 10,
      onRequiresAction: (paused) => {
        seen.push(paused);
        return paused.requiredAction.toolCalls.map((call) => ({
          toolCallId: call.id,
          output: `${call.name} done`,
        }));
      },
    });
    expect(run.status).toBe("completed");
    expect(run.output).toBe('Order: "lookup_order done"');
    expect(seen.map((paused) => paused.id)).toEqual([id]);
    const submission = server.toolOutputSubmissions.at(-1);
    expect(submission?.runId).toBe(id);
    // Sent with an Idempotency-Key, so a retry after a dropped connection cannot answer twice.
    expect(submission?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("a callback that throws fails the wait with its error; the run stays paused", async () => {
    const { id } = await client().runs.create("two-tools", "latest", { inputs: {} });
    const failing = client().runs.wait(id, {
      intervalMs: 10,
      onRequiresAction: () => {
        throw new Error("tool exploded");
      },
    });
    await expect(failing).rejects.toThrow("tool exploded");
    expect((await client().runs.get(id)).phase).toBe("requires_action");
  });

  test("errors: 409 for a run not waiting, 400 for unknown or missing ids, 404 for an unknown run", async () => {
    const plain = await client().runs.create("greet", "latest", { inputs: {} });
    await client().runs.wait(plain.id, { intervalMs: 10 });
    const notWaiting = await rejection(
      client().runs.submitToolOutputs(plain.id, [{ toolCallId: "x", output: 1 }]),
    );
    expect([notWaiting.status, notWaiting.code]).toEqual([409, "conflict"]);
    expect(notWaiting.message).toBe("run is completed, not waiting for tool outputs");

    const { id } = await client().runs.create("two-tools", "latest", { inputs: {} });
    await client().runs.wait(id, { intervalMs: 10 });
    const unknown = await rejection(client().runs.submitToolOutputs(id, [{ toolCallId: "nope", output: 1 }]));
    expect([unknown.status, unknown.code]).toEqual([400, "invalid"]);
    const missing = await rejection(
      client().runs.submitToolOutputs(id, [{ toolCallId: "call_1", output: 1 }]),
    );
    expect(missing.message).toBe("toolOutputs: no output for 'call_2'");
    const gone = await rejection(
      client().runs.submitToolOutputs(crypto.randomUUID(), [{ toolCallId: "a", output: 1 }]),
    );
    expect(gone.code).toBe("not_found");
  });

  test("a pause nobody answers ends the run failed, and wait returns it", async () => {
    const { id } = await client().runs.create("quick-expiry", "latest", { inputs: {} });
    const run = await client().runs.wait(id, { intervalMs: 10, onRequiresAction: () => undefined });
    expect(run.status).toBe("failed");
    expect(run.error).toStartWith("tool outputs were not submitted before ");
  });

  test("the thread subscription carries steps, tool calls and the pause, in order", async () => {
    const thread = crypto.randomUUID();
    const events: StreamEnvelope[] = [];
    for await (const event of client().threads.subscribe(thread)) {
      events.push(event);
      if (event.type === "ready") await client().runs.create("two-tools", "latest", { inputs: {}, thread });
      if (event.type === "run.requires_action") {
        await client().runs.submitToolOutputs(event.data.runId, [
          { toolCallId: "call_1", output: "ok" },
          { toolCallId: "call_2", output: "noon" },
        ]);
      }
      if (event.type === "run.completed") break;
    }
    const types = events.map((event) => event.type).filter((type) => type !== "run.token");
    expect(types).toEqual([
      "ready",
      "run.step",
      "run.started",
      "run.tool_call",
      "run.tool_call",
      "run.requires_action",
      "run.step",
      "run.completed",
    ]);
    const pause = events.find((event) => event.type === "run.requires_action");
    expect(pause?.type === "run.requires_action" && pause.data.requiredAction.toolCalls).toEqual([
      lookup,
      clock,
    ]);
    // Token indexes go on across the run's steps.
    const indexes = events.flatMap((event) => (event.type === "run.token" ? [event.data.index] : []));
    expect(indexes).toEqual([0, 1, 2, 3]);
  });
});
