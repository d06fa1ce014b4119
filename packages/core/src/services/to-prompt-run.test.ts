import { describe, expect, test } from "bun:test";
import { promptRunSchema } from "@promptrun/contract";
import type { RunPause, RunRecord, RunStepRecord } from "../ports.ts";
import { toPromptRun } from "./to-prompt-run.ts";

const block = { input: 0.1, cachedInput: 0, output: 0.2, webSearch: 0, total: 0.3 };
const cost = { success: block, retries: { ...block, total: 0 }, total: 0.3 };
const usage = { input: 10, inputCached: 0, output: 5, reasoning: 0, total: 15 };

const record = (overrides: Partial<RunRecord>): RunRecord => ({
  id: "0190f1f0-0000-7000-8000-000000000001",
  tenantId: "tenant",
  threadId: "0190f1f0-0000-7000-8000-000000000002",
  channel: "default",
  promptId: "0190f1f0-0000-7000-8000-000000000003",
  promptVersionId: "0190f1f0-0000-7000-8000-000000000004",
  promptSlug: "greet",
  promptVersion: 2,
  priority: "normal",
  environment: "production",
  status: "pending",
  inputs: { name: "Ada" },
  metadata: { user: "u1" },
  encryptedEnvVars: null,
  createdAt: new Date("2030-01-01T00:00:00.000Z"),
  startedAt: null,
  finishedAt: null,
  output: null,
  error: null,
  tokenUsage: null,
  cost: null,
  attempts: 0,
  outputJson: null,
  finishReason: null,
  memoryWindow: null,
  steps: [],
  retrieval: [],
  citations: [],
  pause: null,
  ...overrides,
});

const step = (index: number, overrides: Partial<RunStepRecord> = {}): RunStepRecord => ({
  index,
  attempts: 1,
  model: "openai:gpt-4o-mini",
  text: index === 0 ? "" : "It is sunny.",
  toolCalls: index === 0 ? [{ id: "call_1", name: "lookup_order", arguments: { number: "42" } }] : [],
  toolResults: [],
  finishReason: index === 0 ? "tool-calls" : "stop",
  usage,
  cost,
  startedAt: `2030-01-01T00:00:0${index + 1}.000Z`,
  finishedAt: `2030-01-01T00:00:0${index + 2}.000Z`,
  tokens: 7,
  ...overrides,
});

const pause: RunPause = {
  step: 0,
  requiredAction: {
    type: "submit_tool_outputs",
    toolCalls: [{ id: "call_1", name: "lookup_order", arguments: { number: "42" } }],
    expiresAt: "2030-01-01T00:10:02.000Z",
  },
  expiresAt: new Date("2030-01-01T00:10:02.000Z"),
};

// Records deliberately carrying stray fields, to show the rules hold regardless.
const stray = {
  finishedAt: new Date("2030-01-01T00:00:05.000Z"),
  output: "partial",
  error: "stale",
  tokenUsage: usage,
  cost,
};

describe("toPromptRun", () => {
  test("pending: finishedAt, output, tokenUsage, cost (and error) are null", () => {
    const run = toPromptRun(record({ status: "pending", ...stray }));
    expect(run).toMatchObject({
      status: "pending",
      finishedAt: null,
      output: null,
      tokenUsage: null,
      cost: null,
      error: null,
    });
    expect(promptRunSchema.parse(run)).toEqual(run);
  });

  test("failed: output and tokenUsage null, error and cost kept", () => {
    const run = toPromptRun(record({ status: "failed", ...stray, error: "cancelled" }));
    expect(run).toMatchObject({
      status: "failed",
      output: null,
      tokenUsage: null,
      error: "cancelled",
      cost,
      finishedAt: "2030-01-01T00:00:05.000Z",
    });
    expect(toPromptRun(record({ status: "failed", error: null })).error).toBe("run failed");
    expect(promptRunSchema.parse(run)).toEqual(run);
  });

  test("completed: error null, output, usage, cost and the extension fields", () => {
    const run = toPromptRun(
      record({
        status: "completed",
        ...stray,
        output: "hello",
        startedAt: new Date("2030-01-01T00:00:01.000Z"),
        attempts: 2,
      }),
    );
    expect(run).toEqual({
      id: "0190f1f0-0000-7000-8000-000000000001",
      status: "completed",
      createdAt: "2030-01-01T00:00:00.000Z",
      finishedAt: "2030-01-01T00:00:05.000Z",
      output: "hello",
      error: null,
      tokenUsage: usage,
      cost,
      thread: "0190f1f0-0000-7000-8000-000000000002",
      channel: "default",
      prompt: { slug: "greet", version: 2, id: "0190f1f0-0000-7000-8000-000000000004" },
      priority: "normal",
      environment: "production",
      metadata: { user: "u1" },
      startedAt: "2030-01-01T00:00:01.000Z",
      attempts: 2,
      outputJson: null,
      finishReason: null,
      phase: null,
      requiredAction: null,
      steps: [],
      retrieval: [],
      citations: [],
      workflowRun: null,
      memory: null,
    });
    expect(promptRunSchema.parse(run)).toEqual(run);
  });

  test("phase: queued until started, running once started, requires_action while paused", () => {
    const startedAt = new Date("2030-01-01T00:00:01.000Z");
    expect(toPromptRun(record({})).phase).toBe("queued");
    expect(toPromptRun(record({ startedAt })).phase).toBe("running");
    const paused = toPromptRun(record({ startedAt, steps: [step(0)], pause }));
    expect(paused).toMatchObject({ phase: "requires_action", requiredAction: pause.requiredAction });
    expect(promptRunSchema.parse(paused)).toEqual(paused);
    expect(toPromptRun(record({ startedAt })).requiredAction).toBeNull();
  });

  test("an ended run has no phase and no required action, whatever the record holds", () => {
    for (const status of ["completed", "failed"] as const) {
      const run = toPromptRun(record({ status, ...stray, pause, steps: [step(0)] }));
      expect(run.phase).toBeNull();
      expect(run.requiredAction).toBeNull();
      expect(promptRunSchema.parse(run)).toEqual(run);
    }
  });

  test("steps are shown in order without the stored token count", () => {
    const steps = [step(0), step(1, { toolResults: [] })];
    const run = toPromptRun(record({ status: "completed", ...stray, steps }));
    expect(run.steps).toHaveLength(2);
    expect(run.steps.map((shown) => shown.index)).toEqual([0, 1]);
    for (const [index, shown] of run.steps.entries()) {
      expect(shown).not.toHaveProperty("tokens");
      expect(shown).not.toHaveProperty("attempts");
      const { tokens: _tokens, attempts: _attempts, ...expected } = steps[index]!;
      expect(shown).toEqual(expected);
    }
    expect(promptRunSchema.parse(run)).toEqual(run);
  });
});
