import { afterEach, describe, expect, test } from "bun:test";
import type { RunRecord } from "../ports.ts";
import { buildCost, zeroCostBlock } from "../pricing/cost.ts";
import type { EngineMetrics } from "../services.ts";
import { createEngineFixture, type EngineFixture } from "./engine-test-fixture.ts";
import {
  CANCELLED,
  endRunCompleted,
  endRunFailed,
  MAX_ERROR_MESSAGE_BYTES,
  type RunEndingDeps,
} from "./run-ending.ts";

const fixtures: EngineFixture[] = [];
afterEach(async () => {
  for (const fixture of fixtures.splice(0)) await fixture.close();
});

/** A pending run in a real memory store, with deps that record webhooks' final runs and metrics. */
async function setUp() {
  const fixture = await createEngineFixture();
  fixtures.push(fixture);
  const run = await fixture.createRun({ enqueue: false });
  const finalRuns: RunRecord[] = [];
  const finished: Array<Parameters<EngineMetrics["runFinished"]>> = [];
  const deps: RunEndingDeps = {
    store: fixture.store,
    clock: { now: () => new Date() },
    events: fixture.events,
    buildWebhookDeliveries: async (finalRun) => {
      finalRuns.push(finalRun);
      return [];
    },
    metrics: {
      runFinished: (...args) => finished.push(args),
      providerCall: () => {},
      queueDepth: () => {},
    },
  };
  const eventTypes = () => fixture.eventsOf(run.id).map((delivered) => delivered.event.type);
  return { fixture, run, deps, finalRuns, finished, eventTypes };
}

const usage = { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 };

describe("endRunCompleted", () => {
  test("stores the output and memory, hands webhooks the final record, publishes and counts once", async () => {
    const { fixture, run, deps, finalRuns, finished, eventTypes } = await setUp();
    const startedAt = new Date();
    const ending = {
      output: "hi",
      tokenUsage: usage,
      cost: buildCost(zeroCostBlock(), zeroCostBlock()),
      startedAt,
      attempts: 2,
      steps: [],
      memory: [
        { role: "user" as const, content: "hello there" },
        { role: "assistant" as const, content: "hi" },
      ],
      modelLabel: "openai:gpt-4o-mini",
    };
    expect(await endRunCompleted(deps, run, ending)).toBe(true);

    const stored = await fixture.store.runs.getById(run.id);
    expect(stored?.status).toBe("completed");
    expect(stored?.output).toBe("hi");
    expect(await fixture.store.runs.memory(run.tenantId, run.threadId, run.channel)).toEqual({
      messages: ending.memory,
      dropped: 0,
    });
    expect(finalRuns).toHaveLength(1);
    expect(finalRuns[0]).toMatchObject({ status: "completed", output: "hi", attempts: 2, startedAt });
    expect(finalRuns[0]?.encryptedEnvVars).toBeNull();
    expect(eventTypes()).toEqual(["run.completed"]);
    expect(finished.map(([outcome, model]) => [outcome, model])).toEqual([
      ["completed", "openai:gpt-4o-mini"],
    ]);

    // Ended already: the compare-and-set loses, nothing is published or counted again.
    expect(await endRunCompleted(deps, run, ending)).toBe(false);
    expect(await endRunFailed(deps, run, { error: "late", modelLabel: "x" })).toBe(false);
    expect(eventTypes()).toEqual(["run.completed"]);
    expect(finished).toHaveLength(1);
    expect((await fixture.store.runs.getById(run.id))?.status).toBe("completed");
  });
});

describe("endRunFailed", () => {
  test("a cancel of a run that never executed: zero cost, the event, no metric without a model", async () => {
    const { fixture, run, deps, finalRuns, finished, eventTypes } = await setUp();
    expect(await endRunFailed(deps, run, { error: CANCELLED })).toBe(true);

    const stored = await fixture.store.runs.getById(run.id);
    expect(stored?.status).toBe("failed");
    expect(stored?.error).toBe(CANCELLED);
    expect(stored?.cost?.total).toBe(0);
    expect(finalRuns[0]).toMatchObject({ status: "failed", error: CANCELLED, output: null, attempts: 0 });
    expect(eventTypes()).toEqual(["run.failed"]);
    expect(finished).toEqual([]);
  });

  test("trims a huge provider error to the stored limit and counts the failure under its model", async () => {
    const { fixture, run, deps, finished } = await setUp();
    const huge = "é".repeat(MAX_ERROR_MESSAGE_BYTES);
    expect(await endRunFailed(deps, run, { error: huge, attempts: 3, modelLabel: "other" })).toBe(true);

    const error = (await fixture.store.runs.getById(run.id))?.error ?? "";
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(error.endsWith("…[truncated]")).toBe(true);
    const failedEvent = fixture.eventsOf(run.id).find((delivered) => delivered.event.type === "run.failed");
    expect(failedEvent?.event.data).toMatchObject({ runId: run.id, error });
    expect(finished.map(([outcome, model]) => [outcome, model])).toEqual([["failed", "other"]]);
  });
});
