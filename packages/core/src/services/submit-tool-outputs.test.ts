import { describe, expect, test } from "bun:test";
import { TOOL_RESULT_KEPT_BYTES, type ToolCall } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import type { RunEngine } from "../engine-port.ts";
import type { RunRecord, RunStepRecord } from "../ports.ts";
import { recordingEngine } from "../testing/recording-engine.ts";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture, greetPrompt } from "../testing/service-fixture.ts";
import { createRunService } from "./run-service.ts";

const calls: ToolCall[] = [
  { id: "call_a", name: "lookup_order", arguments: { number: "A-1" } },
  { id: "call_b", name: "get_local_time", arguments: {} },
];
const PAUSE_SECONDS = 600;

const stepOf = (index: number, toolCalls: ToolCall[], at: Date): RunStepRecord => ({
  index,
  model: "dev:echo",
  text: "",
  toolCalls,
  toolResults: [],
  finishReason: "tool-calls",
  usage: { input: 10, inputCached: 0, output: 5, reasoning: 0, total: 15 },
  cost: {
    success: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
    retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
    total: 0,
  },
  startedAt: at.toISOString(),
  finishedAt: at.toISOString(),
  tokens: 0,
  attempts: 1,
});

/** Real services on the memory store; the engine records what it is asked (resume included). */
const setup = async (overrides: Partial<PromptrunConfig> = {}) => {
  const fixture = createServiceFixture(overrides);
  const resumed: RunRecord[] = [];
  const engine: RunEngine = {
    ...recordingEngine({ store: fixture.store, clock: fixture.clock }),
    resume: (run) => {
      resumed.push(run);
    },
  };
  const runs = createRunService({ ...fixture, engine });
  const { tenant } = await fixture.createTenant("A");
  const { tenant: other } = await fixture.createTenant("B");
  await fixture.services.prompts.push(tenant.id, [greetPrompt]);
  const { store, clock } = fixture;

  /** A run of tenant A paused at step `step` for `toolCalls` (a server tool already answered in it). */
  const pausedRun = async (toolCalls: ToolCall[] = calls, step = 0) => {
    const { id, thread } = await runs.create(tenant, "greet", "latest", { inputs: { name: "Ada" } });
    const now = clock.now();
    await store.runs.markStarted(id, now, 1);
    const earlier = Array.from({ length: step }, (_, index) => stepOf(index, [], now));
    const asking = stepOf(step, [...toolCalls, { id: "srv_1", name: "get_weather", arguments: {} }], now);
    asking.toolResults = [
      { toolCallId: "srv_1", name: "get_weather", output: "sunny", isError: false, executedBy: "server" },
    ];
    const expiresAt = new Date(now.getTime() + PAUSE_SECONDS * 1000);
    const paused = await store.runs.pause(id, {
      steps: [...earlier, asking],
      pause: {
        step,
        requiredAction: { type: "submit_tool_outputs", toolCalls, expiresAt: expiresAt.toISOString() },
        expiresAt,
      },
      deliveries: [],
    });
    expect(paused).toBe(true);
    return { id, thread, expiresAt };
  };
  return { ...fixture, runs, resumed, tenant, other, pausedRun };
};

const answers = {
  toolOutputs: [
    { toolCallId: "call_b", output: { time: "12:00" } },
    { toolCallId: "call_a", output: "shipped" },
  ],
};

describe("RunService.submitToolOutputs: the pause ends and the run goes on", () => {
  test("202 answer; the paused step gets one client result per call, in the model's order", async () => {
    const { runs, store, tenant, resumed, pausedRun } = await setup();
    const { id, thread } = await pausedRun();
    expect(await runs.submitToolOutputs(tenant, id, answers)).toEqual({ id, thread, replayed: false });

    const stored = await store.runs.get(tenant.id, id);
    expect(stored?.pause).toBeNull();
    expect(stored?.status).toBe("pending");
    expect(stored?.steps[0]?.toolResults).toEqual([
      { toolCallId: "srv_1", name: "get_weather", output: "sunny", isError: false, executedBy: "server" },
      { toolCallId: "call_a", name: "lookup_order", output: "shipped", isError: false, executedBy: "client" },
      {
        toolCallId: "call_b",
        name: "get_local_time",
        output: { time: "12:00" },
        isError: false,
        executedBy: "client",
      },
    ]);
    // The engine gets the run as stored: steps with the outputs, no pause.
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ id, pause: null });
    expect(resumed[0]?.steps).toEqual(stored!.steps);
  });

  test("only the paused step changes when the run paused at a later step", async () => {
    const { runs, store, tenant, pausedRun } = await setup();
    const { id } = await pausedRun([calls[0]!], 2);
    await runs.submitToolOutputs(tenant, id, { toolOutputs: [{ toolCallId: "call_a", output: null }] });
    const steps = (await store.runs.get(tenant.id, id))!.steps;
    expect(steps.map((step) => step.toolResults.length)).toEqual([0, 0, 2]);
    expect(steps[2]?.toolResults[1]).toMatchObject({ toolCallId: "call_a", output: null });
  });

  test("an output over 64 KB is kept cut, with …[truncated]; a small JSON value is kept as is", async () => {
    const { runs, store, tenant, pausedRun } = await setup();
    const { id } = await pausedRun();
    const long = "é".repeat(100_000);
    const big = { rows: Array.from({ length: 5_000 }, (_, index) => ({ index, name: `row ${index}` })) };
    await runs.submitToolOutputs(tenant, id, {
      toolOutputs: [
        { toolCallId: "call_a", output: long },
        { toolCallId: "call_b", output: big },
      ],
    });
    const [, first, second] = (await store.runs.get(tenant.id, id))!.steps[0]!.toolResults;
    const keptLong = String(first?.output);
    const keptBig = String(second?.output);
    for (const kept of [keptLong, keptBig]) {
      expect(kept.endsWith("…[truncated]")).toBe(true);
      expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(TOOL_RESULT_KEPT_BYTES);
      expect(Buffer.byteLength(kept)).toBeGreaterThan(TOOL_RESULT_KEPT_BYTES - 8);
    }
    expect([typeof first?.output, typeof second?.output]).toEqual(["string", "string"]);
    // Cut on a character boundary: no replacement character, and the kept text starts the original.
    expect(keptLong.includes("\uFFFD")).toBe(false);
    expect(long.startsWith(keptLong.replace("…[truncated]", ""))).toBe(true);
    expect(JSON.stringify(big).startsWith(keptBig.replace("…[truncated]", ""))).toBe(true);
  });
});

describe("RunService.submitToolOutputs: refusals, in order", () => {
  test("403 without an active subscription, before the run is looked up", async () => {
    const { runs, tenant } = await setup();
    const error = await rejection(
      runs.submitToolOutputs({ ...tenant, subscriptionActive: false }, crypto.randomUUID(), {}),
    );
    expect([error.code, error.message]).toEqual(["forbidden", "no active subscription"]);
  });

  test("404 for an unknown, malformed or other tenant's run, even with a bad body", async () => {
    const { runs, other, pausedRun } = await setup();
    const { id } = await pausedRun();
    for (const [tenant, runId] of [
      [other, id],
      [other, crypto.randomUUID()],
      [other, "not-a-uuid"],
    ] as const) {
      const error = await rejection(runs.submitToolOutputs(tenant, runId, { bogus: 1 }));
      expect([error.code, error.message]).toEqual(["not_found", `run '${runId}' not found`]);
    }
  });

  test("400 for a body that breaks the schema, names the field", async () => {
    const { runs, tenant, pausedRun } = await setup();
    const { id } = await pausedRun();
    const cases: Array<[unknown, string]> = [
      [null, "request body must be a JSON object"],
      [{}, "toolOutputs: required"],
      [{ toolOutputs: [] }, "toolOutputs: Too small: expected array to have >=1 items"],
      [{ toolOutputs: [{ toolCallId: "call_a", output: 1 }], extra: true }, "unknown field 'extra'"],
      [{ toolOutputs: [{ toolCallId: "", output: 1 }] }, "toolOutputs[0].toolCallId: Too small"],
      [{ toolOutputs: [{ toolCallId: "call_a" }] }, "toolOutputs[0].output: required"],
      // In process (tRPC, a script) a key may be present and undefined: still no output.
      [{ toolOutputs: [{ toolCallId: "call_a", output: undefined }] }, "toolOutputs[0].output: required"],
      [
        { toolOutputs: [{ toolCallId: "call_a", output: 1, isError: true }] },
        "unknown field 'toolOutputs[0].isError'",
      ],
    ];
    for (const [body, message] of cases) {
      const error = await rejection(runs.submitToolOutputs(tenant, id, body));
      expect(error.code).toBe("invalid");
      expect(error.message).toStartWith(message);
    }
  });

  test("400 for a repeated id and for an output over 256 KB (as a string, or as JSON)", async () => {
    const { runs, tenant, pausedRun, store } = await setup();
    const { id } = await pausedRun();
    const repeated = await rejection(
      runs.submitToolOutputs(tenant, id, {
        toolOutputs: [
          { toolCallId: "call_a", output: 1 },
          { toolCallId: "call_a", output: 2 },
        ],
      }),
    );
    expect([repeated.code, repeated.message]).toEqual([
      "invalid",
      "toolOutputs[1].toolCallId: 'call_a' is repeated",
    ]);
    const text = await rejection(
      runs.submitToolOutputs(tenant, id, {
        toolOutputs: [
          { toolCallId: "call_a", output: "x" },
          { toolCallId: "call_b", output: "ü".repeat(150_000) },
        ],
      }),
    );
    expect([text.code, text.message]).toEqual([
      "invalid",
      "toolOutputs[1].output: 300000 bytes; at most 262144 bytes are allowed (UTF-8, its JSON when not a string)",
    ]);
    const json = await rejection(
      runs.submitToolOutputs(tenant, id, {
        toolOutputs: [{ toolCallId: "call_a", output: { blob: "x".repeat(262_140) } }],
      }),
    );
    expect(json.message).toStartWith("toolOutputs[0].output: 262151 bytes;");
    // Exactly at the limit is fine.
    const atLimit = "x".repeat(262_144);
    await runs.submitToolOutputs(tenant, id, {
      toolOutputs: [
        { toolCallId: "call_a", output: atLimit },
        { toolCallId: "call_b", output: "ok" },
      ],
    });
    expect((await store.runs.get(tenant.id, id))?.pause).toBeNull();
  });

  test("400 for an id the run did not ask for, and for calls left without an output (named)", async () => {
    const { runs, tenant, pausedRun, resumed, store } = await setup();
    const { id } = await pausedRun();
    const unknown = await rejection(
      runs.submitToolOutputs(tenant, id, {
        toolOutputs: [
          { toolCallId: "call_a", output: 1 },
          { toolCallId: "srv_1", output: 2 },
        ],
      }),
    );
    expect([unknown.code, unknown.message]).toEqual([
      "invalid",
      "toolOutputs[1].toolCallId: 'srv_1' is not a tool call the run waits for",
    ]);
    const missing = await rejection(
      runs.submitToolOutputs(tenant, id, { toolOutputs: [{ toolCallId: "call_b", output: 1 }] }),
    );
    expect([missing.code, missing.message]).toEqual([
      "invalid",
      "toolOutputs: no output for 'call_a' (lookup_order)",
    ]);
    // Nothing changed.
    expect((await store.runs.get(tenant.id, id))?.pause?.step).toBe(0);
    expect(resumed).toHaveLength(0);
  });

  test("409 when the run is not waiting: the message names its status and phase", async () => {
    const { runs, tenant, store, clock, pausedRun } = await setup();
    const queued = await runs.create(tenant, "greet", "latest", { inputs: { name: "Q" } });
    const running = await runs.create(tenant, "greet", "latest", { inputs: { name: "R" } });
    await store.runs.markStarted(running.id, clock.now(), 1);
    const cases: Array<[string, string]> = [
      [queued.id, "run is pending (phase queued), not waiting for tool outputs"],
      [running.id, "run is pending (phase running), not waiting for tool outputs"],
    ];
    const answered = await pausedRun();
    await runs.submitToolOutputs(tenant, answered.id, answers);
    cases.push([answered.id, "run is pending (phase running), not waiting for tool outputs"]);
    const failed = await pausedRun();
    await runs.cancel(tenant.id, failed.id);
    cases.push([failed.id, "run is failed, not waiting for tool outputs"]);
    for (const [id, message] of cases) {
      const error = await rejection(runs.submitToolOutputs(tenant, id, answers));
      expect([error.code, error.message]).toEqual(["conflict", message]);
    }
  });

  test("409 once the pause has expired, even before the run is failed for it", async () => {
    const { runs, tenant, clock, pausedRun, resumed } = await setup();
    const { id, expiresAt } = await pausedRun();
    clock.advance(PAUSE_SECONDS * 1000);
    const error = await rejection(runs.submitToolOutputs(tenant, id, answers));
    expect([error.code, error.message]).toEqual([
      "conflict",
      `tool outputs were not submitted before ${expiresAt.toISOString()}`,
    ]);
    expect(resumed).toHaveLength(0);
  });

  test("concurrent submissions: exactly one resumes the run, the others get a 409", async () => {
    const { runs, tenant, pausedRun, resumed } = await setup();
    const { id } = await pausedRun();
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => runs.submitToolOutputs(tenant, id, answers)),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results) {
      if (result.status === "rejected") expect(result.reason).toMatchObject({ code: "conflict" });
    }
    expect(resumed).toHaveLength(1);
  });

  test("a pause that ends between the read and the write: 409 with where the run is now", async () => {
    const { runs, tenant, store, pausedRun, resumed } = await setup();
    const { id } = await pausedRun();
    // The run is cancelled right as this submission writes.
    const resume = store.runs.resume;
    store.runs.resume = async (...args) => {
      await runs.cancel(tenant.id, id);
      return resume(...args);
    };
    const error = await rejection(runs.submitToolOutputs(tenant, id, answers));
    expect([error.code, error.message]).toEqual(["conflict", "run is failed, not waiting for tool outputs"]);
    expect(resumed).toHaveLength(0);
  });
});

describe("RunService.submitToolOutputs: Idempotency-Key", () => {
  test("a replay answers the same 202 after the run has moved on, and resumes nothing more", async () => {
    const { runs, tenant, pausedRun, resumed, store } = await setup();
    const { id, thread } = await pausedRun();
    const first = await runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "t1" });
    const reordered = {
      toolOutputs: answers.toolOutputs.map((entry) => ({
        output: entry.output,
        toolCallId: entry.toolCallId,
      })),
    };
    const again = await runs.submitToolOutputs(tenant, id, reordered, { idempotencyKey: "t1" });
    expect(first).toEqual({ id, thread, replayed: false });
    expect(again).toEqual({ id, thread, replayed: true });
    expect(resumed).toHaveLength(1);
    // Even once the run has ended.
    await runs.cancel(tenant.id, id);
    expect((await runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "t1" })).replayed).toBe(true);
    expect((await store.runs.get(tenant.id, id))?.status).toBe("failed");
  });

  test("the same key with another body, another run, or a create's key → conflict", async () => {
    const { runs, tenant, pausedRun } = await setup();
    const { id } = await pausedRun();
    const second = await pausedRun();
    await runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "t1" });
    const otherBody = await rejection(
      runs.submitToolOutputs(
        tenant,
        id,
        {
          toolOutputs: [
            { toolCallId: "call_a", output: "other" },
            { toolCallId: "call_b", output: 1 },
          ],
        },
        { idempotencyKey: "t1" },
      ),
    );
    expect([otherBody.code, otherBody.message]).toEqual([
      "conflict",
      "Idempotency-Key reused with a different request",
    ]);
    const otherRun = await rejection(
      runs.submitToolOutputs(tenant, second.id, answers, { idempotencyKey: "t1" }),
    );
    expect(otherRun.code).toBe("conflict");
    await runs.create(tenant, "greet", "latest", { inputs: { name: "K" } }, { idempotencyKey: "c1" });
    const createKey = await rejection(
      runs.submitToolOutputs(tenant, second.id, answers, { idempotencyKey: "c1" }),
    );
    expect([createKey.code, createKey.message]).toEqual([
      "conflict",
      "Idempotency-Key reused with a different request",
    ]);
  });

  test("a refused submission stores no key: the corrected one may use it", async () => {
    const { runs, tenant, pausedRun } = await setup();
    const { id } = await pausedRun();
    const refused = await rejection(
      runs.submitToolOutputs(
        tenant,
        id,
        { toolOutputs: [{ toolCallId: "call_a", output: 1 }] },
        { idempotencyKey: "t2" },
      ),
    );
    expect(refused.code).toBe("invalid");
    expect((await runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "t2" })).replayed).toBe(
      false,
    );
  });

  test("concurrent retries with one key: one resume, the rest replay it", async () => {
    const { runs, tenant, pausedRun, resumed } = await setup();
    const { id } = await pausedRun();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "race" }),
      ),
    );
    expect(results.filter((result) => !result.replayed)).toHaveLength(1);
    expect(new Set(results.map((result) => result.id))).toEqual(new Set([id]));
    expect(resumed).toHaveLength(1);
  });

  test("an empty or overlong key is invalid; keys expire with idempotencyTtlSeconds", async () => {
    const { runs, tenant, pausedRun, clock } = await setup({ idempotencyTtlSeconds: 60 });
    const { id } = await pausedRun();
    for (const key of ["", "k".repeat(256)]) {
      expect(
        (await rejection(runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: key }))).code,
      ).toBe("invalid");
    }
    await runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "t3" });
    clock.advance(61_000);
    // Expired: no replay any more, the run's state answers.
    const late = await rejection(runs.submitToolOutputs(tenant, id, answers, { idempotencyKey: "t3" }));
    expect(late.code).toBe("conflict");
    expect(late.message).toContain("not waiting for tool outputs");
  });
});
