import { describe, expect, test } from "bun:test";
import type { StreamEnvelope, ToolCall } from "@promptrun/contract";
import { initialThreadStreamState, type ThreadStreamState, threadStreamReducer } from "./thread-state.ts";

const runId = "0196f3c1-1f0e-7a3b-8b7c-1234567890ab";
const thread = "0196f3c1-1f0e-7a3b-8b7c-000000000001";
const prompt = { slug: "chat", version: 1 };
const cost = {
  success: { input: 0, cachedInput: 0, output: 0.5, webSearch: 0, total: 0.5 },
  retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
  total: 0.5,
};
const started = (attempt: number): StreamEnvelope => ({
  type: "run.started",
  id: "1",
  data: { runId, thread, channel: "default", prompt, attempt },
});
const token = (index: number, delta: string, id = String(index + 2)): StreamEnvelope => ({
  type: "run.token",
  id,
  data: { runId, channel: "default", index, delta },
});

const fold = (envelopes: StreamEnvelope[], from: ThreadStreamState = initialThreadStreamState) =>
  envelopes.reduce((state, envelope) => threadStreamReducer(state, { type: "event", envelope }), from);

describe("threadStreamReducer", () => {
  test("run.retrieval leaves the run's text alone and moves lastEventId", () => {
    const retrieval: StreamEnvelope = {
      type: "run.retrieval",
      id: "9",
      data: { runId, knowledgeBase: "handbook", query: "refunds", chunks: [] },
    };
    const state = fold([started(1), token(0, "Hi"), retrieval]);
    expect(state.runs[runId]?.text).toBe("Hi");
    expect(state.lastEventId).toBe("9");
  });

  test("appends tokens in order and ignores replayed duplicates", () => {
    const state = fold([started(1), token(0, "Hel"), token(1, "lo"), token(1, "lo"), token(0, "Hel")]);
    expect(state.runs[runId]?.text).toBe("Hello");
    expect(state.runs[runId]?.nextTokenIndex).toBe(2);
    expect(state.lastEventId).toBe("2");
  });

  test("a later attempt drops the text of the failed one", () => {
    const state = fold([started(1), token(0, "partial "), started(2), token(0, "fresh")]);
    expect(state.runs[runId]?.text).toBe("fresh");
    expect(state.runs[runId]?.attempt).toBe(2);
    // A replayed, older run.started does not wipe the newer attempt.
    expect(fold([started(1)], state).runs[runId]?.text).toBe("fresh");
  });

  test("completion replaces the streamed text with the output; tokens after it are ignored", () => {
    const state = fold([
      token(0, "Hi"),
      {
        type: "run.completed",
        id: "9",
        data: {
          runId,
          output: "Hi there",
          tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
          cost,
          finishedAt: "2026-01-01T00:00:00.000Z",
        },
      },
      token(1, " late"),
    ]);
    expect(state.runs[runId]).toMatchObject({ status: "completed", text: "Hi there", cost });
    expect(state.runIds).toEqual([runId]);
  });

  test("completion keeps outputJson, finishReason and memory; an older server's event leaves them null", () => {
    const completed = (extra: Record<string, unknown>): StreamEnvelope => ({
      type: "run.completed",
      id: "9",
      data: {
        runId,
        output: '{"a":1}',
        tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
        cost,
        finishedAt: "2026-01-01T00:00:00.000Z",
        ...extra,
      },
    });
    const withFields = fold([
      started(1),
      completed({ outputJson: { a: 1 }, finishReason: "length", memory: { messages: 4, dropped: 2 } }),
    ]);
    expect(withFields.runs[runId]).toMatchObject({
      outputJson: { a: 1 },
      finishReason: "length",
      memory: { messages: 4, dropped: 2 },
    });
    expect(fold([started(1)]).runs[runId]).toMatchObject({
      outputJson: null,
      finishReason: null,
      memory: null,
    });
    expect(fold([started(1), completed({})]).runs[runId]).toMatchObject({
      status: "completed",
      outputJson: null,
      finishReason: null,
      memory: null,
    });
  });

  test("failure keeps the text so far and records error and cost", () => {
    const state = fold([
      started(1),
      token(0, "so far"),
      {
        type: "run.failed",
        id: "3",
        data: { runId, error: "boom", cost, finishedAt: "2026-01-01T00:00:00.000Z" },
      },
    ]);
    expect(state.runs[runId]).toMatchObject({ status: "failed", text: "so far", error: "boom" });
  });

  test("ready opens, end and reset are recorded", () => {
    const opened = fold([{ type: "ready", id: "0", data: { thread } }]);
    expect(opened.status).toBe("open");
    const ended = fold([{ type: "end", id: "0", data: { reason: "shutdown" } }], opened);
    expect(ended.status).toBe("reconnecting");
    const reset = fold([{ type: "reset", id: "5", data: { thread, reason: "too old" } }], opened);
    expect(reset.missedEvents).toBe(true);
  });

  describe("a run that calls tools", () => {
    const lookup: ToolCall = { id: "call_1", name: "lookup_order", arguments: { number: "A-1" } };
    const clock = { id: "call_2", name: "get_local_time", arguments: {} };
    const requiredAction = {
      type: "submit_tool_outputs" as const,
      toolCalls: [lookup, clock],
      expiresAt: "2026-01-01T00:10:00.000Z",
    };
    const step = (index: number): StreamEnvelope => ({
      type: "run.step",
      id: `s${index}`,
      data: { runId, step: index },
    });
    const toolCall = (call: ToolCall): StreamEnvelope => ({
      type: "run.tool_call",
      id: `c-${call.id}`,
      data: { runId, step: 0, toolCall: call },
    });
    const pause: StreamEnvelope = { type: "run.requires_action", id: "p", data: { runId, requiredAction } };
    const result = (call: ToolCall, isError: boolean): StreamEnvelope => ({
      type: "run.tool_result",
      id: `r-${call.id}`,
      data: { runId, step: 0, toolCallId: call.id, name: call.name, isError },
    });
    const completed: StreamEnvelope = {
      type: "run.completed",
      id: "done",
      data: {
        runId,
        output: "It shipped.",
        tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
        cost,
        finishedAt: "2026-01-01T00:00:00.000Z",
      },
    };
    const pausedEvents = [
      started(1),
      step(0),
      token(0, "Let me "),
      token(1, "check."),
      toolCall(lookup),
      toolCall(clock),
      pause,
    ];

    test("run.step and run.started in either order: the run keeps its channel and prompt", () => {
      const inSupport: StreamEnvelope = {
        type: "run.started",
        id: "1",
        data: { runId, thread, channel: "support", prompt, attempt: 1 },
      };
      for (const order of [
        [step(0), inSupport],
        [inSupport, step(0)],
      ]) {
        const state = fold([...order, token(0, "Hi")]);
        expect(state.runs[runId]).toMatchObject({ channel: "support", prompt, step: 0, text: "Hi" });
      }
    });

    test("pauses with its calls awaited, in order after the step's text", () => {
      const run = fold(pausedEvents).runs[runId];
      expect(run).toMatchObject({ status: "requires_action", requiredAction, text: "Let me check." });
      expect(run?.parts).toEqual([
        { type: "text", step: 0, text: "Let me check." },
        {
          type: "tool-call",
          step: 0,
          toolCallId: "call_1",
          name: "lookup_order",
          arguments: lookup.arguments,
          state: "awaiting-output",
        },
        {
          type: "tool-call",
          step: 0,
          toolCallId: "call_2",
          name: "get_local_time",
          arguments: {},
          state: "awaiting-output",
        },
      ]);
    });

    test("results and the next step continue it; token indexes go on; completion keeps every step", () => {
      const state = fold([
        ...pausedEvents,
        // A server tool's result, then the next step: the client's calls were answered.
        result(clock, true),
        step(1),
        token(2, "It "),
        token(3, "shipped."),
      ]);
      const running = state.runs[runId];
      expect(running).toMatchObject({
        status: "streaming",
        requiredAction: null,
        step: 1,
        text: "It shipped.",
      });
      expect(running?.parts.map((part) => (part.type === "text" ? part.text : part.state))).toEqual([
        "Let me check.",
        "done",
        "error",
        "It shipped.",
      ]);
      // Until then, a result marks only its own call.
      const answeredOne = fold([...pausedEvents, result(lookup, false)]).runs[runId];
      expect(answeredOne?.parts.map((part) => part.type === "tool-call" && part.state)).toEqual([
        false,
        "done",
        "awaiting-output",
      ]);
      const done = fold([completed], state).runs[runId];
      expect(done).toMatchObject({ status: "completed", text: "It shipped." });
      expect(done?.parts.map((part) => (part.type === "text" ? part.text : part.toolCallId))).toEqual([
        "Let me check.",
        "call_1",
        "call_2",
        "It shipped.",
      ]);
    });

    test("a retry of a later step restarts only that step's text", () => {
      const state = fold([
        ...pausedEvents,
        step(1),
        token(2, "partial"),
        started(2),
        token(2, "It shipped."),
      ]);
      const run = state.runs[runId];
      expect(run).toMatchObject({ text: "It shipped.", attempt: 2, nextTokenIndex: 3 });
      expect(
        run?.parts.filter((part) => part.type === "text").map((part) => part.type === "text" && part.text),
      ).toEqual(["Let me check.", "It shipped."]);
    });

    test("replays change nothing; a pause whose tool_call events were missed still lists its calls", () => {
      const once = fold(pausedEvents);
      expect(fold([toolCall(lookup), step(0), started(1), pause], once).runs[runId]?.parts).toEqual(
        once.runs[runId]?.parts,
      );
      const missed = fold([step(0), pause]).runs[runId];
      expect(missed?.parts.map((part) => part.type === "tool-call" && part.toolCallId)).toEqual([
        "call_1",
        "call_2",
      ]);
      // Nothing after the end changes the run.
      const ended = fold([completed, step(2), pause], once).runs[runId];
      expect(ended).toMatchObject({ status: "completed", requiredAction: null });
    });
  });
});
