import { describe, expect, test } from "bun:test";
import type { StreamEnvelope } from "@promptrun/contract";
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
});
