/**
 * Run steps and paused runs (RunStore.saveSteps, pause, resume, listExpiredPauses, and what a
 * pause changes in complete, fail, claim, listClaimable, list and listPending): one body for
 * every store.
 */
import { beforeEach, expect, test } from "bun:test";
import type { Cost } from "@promptrun/contract";
import type {
  NewRun,
  PromptVersionRecord,
  RunCompletion,
  RunFailure,
  RunPause,
  RunStepRecord,
  TenantRecord,
  WebhookDeliveryRecord,
} from "@promptrun/core";
import { addTenant, at, idempotencyFor, newRun, pushPrompt, stateOf } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

type MemoryMessage = RunCompletion["memory"][number];

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
const cost: Cost = { success: { ...zeroBlock, output: 0.25, total: 0.25 }, retries: zeroBlock, total: 0.25 };
const usage = { input: 4, inputCached: 1, output: 3, reasoning: 2, total: 7 };

/** A step as the engine stores it: ISO timestamps inside, JSON of any shape in tool outputs. */
const step = (index: number, overrides: Partial<RunStepRecord> = {}): RunStepRecord => ({
  index,
  attempts: 1,
  model: "openai:o4-mini",
  text: `step ${index} «ünïcode» "quoted"`,
  toolCalls: [
    { id: `call_${index}`, name: "lookup_order", arguments: { number: "42", nested: { list: [1, null] } } },
  ],
  toolResults: [
    {
      toolCallId: `call_${index}`,
      name: "lookup_order",
      output: { status: "shipped", items: [{ sku: "a", qty: 2 }], note: null },
      isError: false,
      executedBy: "server",
    },
  ],
  finishReason: "tool-calls",
  usage,
  cost,
  startedAt: at(index).toISOString(),
  finishedAt: at(index + 0.5).toISOString(),
  tokens: 3 + index,
  ...overrides,
});

/** A pause at `index` (a client tool call of that step), expiring at `expiresAt`. */
const pauseAt = (index: number, expiresAt = at(600)): RunPause => ({
  step: index,
  requiredAction: {
    type: "submit_tool_outputs",
    toolCalls: [{ id: `client_${index}`, name: "approve", arguments: { amount: 12.5 } }],
    expiresAt: expiresAt.toISOString(),
  },
  expiresAt,
});

const completion = (steps: RunStepRecord[], memory: MemoryMessage[] = []): RunCompletion => ({
  output: "done",
  tokenUsage: usage,
  cost,
  finishedAt: at(100),
  memory,
  deliveries: [],
  steps,
});

const failure = (overrides: Partial<RunFailure> = {}): RunFailure => ({
  error: "tool outputs were not submitted in time",
  cost: null,
  finishedAt: at(700),
  deliveries: [],
  ...overrides,
});

const ids = (runs: Array<{ id: string }>) => runs.map((run) => run.id);

export const runPauseConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let version: PromptVersionRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    version = await pushPrompt(store(), acme.id, "agent");
  });

  const create = async (overrides: Partial<NewRun> = {}): Promise<NewRun> => {
    const run = newRun(version, overrides);
    await store().runs.create(run);
    return run;
  };

  /** A pending run paused at step `index` (steps 0…index stored). */
  const paused = async (index = 0, expiresAt = at(600), overrides: Partial<NewRun> = {}) => {
    const run = await create(overrides);
    await store().runs.markStarted(run.id, at(1), 1);
    const steps = Array.from({ length: index + 1 }, (_, position) => step(position));
    const pause = pauseAt(index, expiresAt);
    expect(await store().runs.pause(run.id, { steps, pause, deliveries: [] })).toBe(true);
    return { run, steps, pause };
  };

  /** A webhook of acme asking for run.requires_action, and its delivery row for `runId`. */
  const requiresActionDelivery = async (runId: string): Promise<WebhookDeliveryRecord> => {
    const environment = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    const webhookId = Bun.randomUUIDv7();
    await store().webhooks.create({
      id: webhookId,
      tenantId: acme.id,
      environmentId: environment.id,
      environment: environment.name,
      url: "https://example.com/hook",
      encryptedSecret: "secret",
      events: ["run.requires_action"],
      enabled: true,
      failureStreak: 0,
      createdAt: at(0),
    });
    return {
      id: Bun.randomUUIDv7(),
      webhookId,
      tenantId: acme.id,
      runId,
      eventId: null,
      eventType: "run.requires_action",
      payload: JSON.stringify({ type: "run.requires_action", data: { id: runId } }),
      status: "pending",
      attempts: 0,
      nextAttemptAt: at(5),
      createdAt: at(5),
    };
  };

  test("a new run has no steps and no pause", async () => {
    const run = await create();
    expect(await store().runs.getById(run.id)).toMatchObject({ steps: [], pause: null });
  });

  test("saveSteps stores the steps of a pending run as given; an ended run keeps its own", async () => {
    const run = await create();
    const steps = [step(0), step(1, { toolCalls: [], toolResults: [], finishReason: "stop", text: "" })];
    expect(await store().runs.saveSteps(run.id, steps.slice(0, 1))).toBe(true);
    expect((await store().runs.getById(run.id))?.steps).toEqual(steps.slice(0, 1));
    expect(await store().runs.saveSteps(run.id, steps)).toBe(true);
    expect((await store().runs.getById(run.id))?.steps).toEqual(steps);

    const final = [...steps, step(2, { finishReason: "stop" })];
    expect(await store().runs.complete(run.id, completion(final))).toBe(true);
    expect((await store().runs.getById(run.id))?.steps).toEqual(final);
    expect(await store().runs.saveSteps(run.id, [])).toBe(false);
    expect((await store().runs.getById(run.id))?.steps).toEqual(final);
    expect(await store().runs.saveSteps(Bun.randomUUIDv7(), steps)).toBe(false);
  });

  test("fail keeps the stored steps unless given steps", async () => {
    const kept = await create();
    await store().runs.saveSteps(kept.id, [step(0)]);
    expect(await store().runs.fail(kept.id, failure())).toBe(true);
    expect((await store().runs.getById(kept.id))?.steps).toEqual([step(0)]);

    const replaced = await create();
    await store().runs.saveSteps(replaced.id, [step(0)]);
    expect(await store().runs.fail(replaced.id, failure({ steps: [step(0), step(1)] }))).toBe(true);
    expect((await store().runs.getById(replaced.id))?.steps).toEqual([step(0), step(1)]);
  });

  test("pause: pending and not paused → paused, lease freed, outbox rows written, once", async () => {
    const run = await create();
    expect(await store().runs.claim(run.id, "instance-a", at(60), at(0))).toBe(true);
    const delivery = await requiresActionDelivery(run.id);
    const steps = [step(0)];
    const pause = pauseAt(0);
    expect(await store().runs.pause(run.id, { steps, pause, deliveries: [delivery] })).toBe(true);

    expect(await store().runs.getById(run.id)).toMatchObject({ status: "pending", steps, pause });
    expect(await store().webhooks.getDelivery(acme.id, delivery.id)).toEqual(stateOf(delivery));
    expect(await store().webhooks.getPayload(run.id, "run.requires_action")).toBe(delivery.payload);
    // The lease is gone: its former owner renews nothing.
    expect((await store().runs.renewLeases("instance-a", [run.id], at(90))).renewed).toEqual([]);

    // Paused already: refused, and its outbox rows are not written.
    const again = { ...delivery, id: Bun.randomUUIDv7() };
    expect(
      await store().runs.pause(run.id, { steps: [step(0), step(1)], pause: pauseAt(1), deliveries: [again] }),
    ).toBe(false);
    expect(await store().runs.getById(run.id)).toMatchObject({ steps, pause });
    expect(await store().webhooks.getDelivery(acme.id, again.id)).toBeNull();

    const ended = await create();
    await store().runs.complete(ended.id, completion([]));
    expect(await store().runs.pause(ended.id, { steps, pause, deliveries: [] })).toBe(false);
    expect((await store().runs.getById(ended.id))?.pause).toBeNull();
    expect(await store().runs.pause(Bun.randomUUIDv7(), { steps, pause, deliveries: [] })).toBe(false);
  });

  test("resume is a compare-and-set on the pause's step", async () => {
    const { run } = await paused(0);
    const answered = [step(0, { toolResults: [...step(0).toolResults, clientResult(0)] })];
    // Another step than the one paused at: refused, nothing changes.
    expect(await store().runs.resume(run.id, { step: 1, steps: answered })).toBe(false);
    expect((await store().runs.getById(run.id))?.pause?.step).toBe(0);

    expect(await store().runs.resume(run.id, { step: 0, steps: answered })).toBe(true);
    expect(await store().runs.getById(run.id)).toMatchObject({
      status: "pending",
      steps: answered,
      pause: null,
    });
    // Answered already.
    expect(await store().runs.resume(run.id, { step: 0, steps: [] })).toBe(false);
    expect((await store().runs.getById(run.id))?.steps).toEqual(answered);

    // Paused again later: a stale resume of the first pause is refused.
    const twoSteps = [...answered, step(1)];
    expect(await store().runs.pause(run.id, { steps: twoSteps, pause: pauseAt(1), deliveries: [] })).toBe(
      true,
    );
    expect(await store().runs.resume(run.id, { step: 0, steps: answered })).toBe(false);
    expect(await store().runs.getById(run.id)).toMatchObject({ steps: twoSteps, pause: pauseAt(1) });
    expect(await store().runs.resume(run.id, { step: 1, steps: twoSteps })).toBe(true);

    const ended = await create();
    await store().runs.fail(ended.id, failure());
    expect(await store().runs.resume(ended.id, { step: 0, steps: [] })).toBe(false);
    expect(await store().runs.resume(Bun.randomUUIDv7(), { step: 0, steps: [] })).toBe(false);
  });

  test("of concurrent resumes and an expiring fail, exactly one wins", async () => {
    for (let round = 0; round < 5; round++) {
      const { run } = await paused(0);
      const outcomes = await Promise.all([
        store().runs.resume(run.id, { step: 0, steps: [step(0, { text: "a" })] }),
        store().runs.fail(run.id, failure({ pausedStep: 0 })),
        store().runs.resume(run.id, { step: 0, steps: [step(0, { text: "c" })] }),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const stored = await store().runs.getById(run.id);
      expect(stored?.pause).toBeNull();
      if (outcomes[1]) expect(stored?.status).toBe("failed");
      else
        expect(stored).toMatchObject({
          status: "pending",
          steps: [step(0, { text: outcomes[0] ? "a" : "c" })],
        });
    }
  });

  test("resume writes its idempotency record in its transaction; a taken key leaves the run paused", async () => {
    const first = await paused(0);
    const record = idempotencyFor(first.run, "outputs-1", at(50));
    expect(await store().runs.resume(first.run.id, { step: 0, steps: first.steps }, record)).toBe(true);
    expect(await store().runs.findIdempotency(acme.id, "outputs-1", at(0))).toEqual(record);

    // The key is taken (fresh): the resume rejects as create does, and changes nothing.
    const second = await paused(0);
    const answered = [step(0, { text: "answered" })];
    await expect(
      store().runs.resume(
        second.run.id,
        { step: 0, steps: answered },
        idempotencyFor(second.run, "outputs-1", at(60)),
      ),
    ).rejects.toMatchObject({ code: "conflict" });
    expect(await store().runs.getById(second.run.id)).toMatchObject({
      steps: second.steps,
      pause: second.pause,
    });
    expect((await store().runs.findIdempotency(acme.id, "outputs-1", at(0)))?.runId).toBe(first.run.id);

    // An expired record is replaced.
    const replacing = idempotencyFor(second.run, "outputs-1", at(70));
    expect(
      await store().runs.resume(second.run.id, { step: 0, steps: answered }, replacing, {
        idempotencyExpiredBefore: at(51),
      }),
    ).toBe(true);
    expect(await store().runs.findIdempotency(acme.id, "outputs-1", at(0))).toEqual(replacing);
    expect((await store().runs.getById(second.run.id))?.steps).toEqual(answered);

    // A resume that does not happen writes no record.
    const notPaused = await create();
    expect(
      await store().runs.resume(notPaused.id, { step: 0, steps: [] }, idempotencyFor(notPaused, "outputs-2")),
    ).toBe(false);
    expect(await store().runs.findIdempotency(acme.id, "outputs-2", at(-1))).toBeNull();
  });

  test("fail with pausedStep fails only a run still paused at that step", async () => {
    const { run, steps } = await paused(0);
    expect(await store().runs.fail(run.id, failure({ pausedStep: 1 }))).toBe(false);
    expect(await store().runs.fail(run.id, failure({ pausedStep: 0 }))).toBe(true);
    expect(await store().runs.getById(run.id)).toMatchObject({
      status: "failed",
      error: "tool outputs were not submitted in time",
      steps,
      pause: null,
    });
    expect(await store().runs.resume(run.id, { step: 0, steps })).toBe(false);

    // Resumed before the expiry was acted on: the expiry no longer applies.
    const resumed = await paused(0);
    await store().runs.resume(resumed.run.id, { step: 0, steps: resumed.steps });
    expect(await store().runs.fail(resumed.run.id, failure({ pausedStep: 0 }))).toBe(false);
    expect((await store().runs.getById(resumed.run.id))?.status).toBe("pending");
    // Without pausedStep any pending run fails.
    expect(await store().runs.fail(resumed.run.id, failure())).toBe(true);

    const neverPaused = await create();
    expect(await store().runs.fail(neverPaused.id, failure({ pausedStep: 0 }))).toBe(false);
  });

  test("complete and fail clear a pause", async () => {
    const completed = await paused(0);
    expect(await store().runs.complete(completed.run.id, completion([step(0)]))).toBe(true);
    expect(await store().runs.getById(completed.run.id)).toMatchObject({ status: "completed", pause: null });
    const failed = await paused(0);
    expect(await store().runs.fail(failed.run.id, failure())).toBe(true);
    expect(await store().runs.getById(failed.run.id)).toMatchObject({ status: "failed", pause: null });
    expect(await store().runs.listExpiredPauses(at(10_000), 10)).toEqual([]);
  });

  test("listExpiredPauses: paused runs expired at or before now, earliest first, at most `limit`", async () => {
    const late = await paused(0, at(30));
    const early = await paused(0, at(10));
    const middle = await paused(0, at(20));
    const future = await paused(0, at(50));
    const resumed = await paused(0, at(5));
    await store().runs.resume(resumed.run.id, { step: 0, steps: resumed.steps });
    const failed = await paused(0, at(6));
    await store().runs.fail(failed.run.id, failure());
    await create();

    const expired = await store().runs.listExpiredPauses(at(30), 10);
    expect(ids(expired)).toEqual([early.run.id, middle.run.id, late.run.id]);
    expect(expired[0]).toMatchObject({ status: "pending", pause: early.pause, steps: early.steps });
    expect(ids(await store().runs.listExpiredPauses(at(30), 2))).toEqual([early.run.id, middle.run.id]);
    expect(await store().runs.listExpiredPauses(at(9.999), 10)).toEqual([]);
    expect(ids(await store().runs.listExpiredPauses(at(50), 10))).toEqual([
      early.run.id,
      middle.run.id,
      late.run.id,
      future.run.id,
    ]);
  });

  test("a paused run is never claimable, and its channel waits behind it", async () => {
    const threadId = Bun.randomUUIDv7();
    const head = await paused(0, at(600), { threadId, createdAt: at(1) });
    const behind = await create({ threadId, createdAt: at(2) });
    const elsewhere = await create({ threadId, channel: "other", createdAt: at(3) });

    expect(ids(await store().runs.listClaimable(at(10), 10))).toEqual([elsewhere.id]);
    expect(await store().runs.claim(head.run.id, "a", at(60), at(10))).toBe(false);
    expect(await store().runs.claim(behind.id, "a", at(60), at(10))).toBe(false);
    // Only a cancel takes a paused run (to end it).
    expect(await store().runs.claim(head.run.id, "a", at(60), at(10), { ignoreChannelOrder: true })).toBe(
      true,
    );
    await store().runs.releaseLease(head.run.id, "a");

    // Resumed: it is its channel's head again, and the run behind it still waits.
    expect(await store().runs.resume(head.run.id, { step: 0, steps: head.steps })).toBe(true);
    expect(ids(await store().runs.listClaimable(at(10), 10))).toEqual([head.run.id, elsewhere.id]);
    expect(await store().runs.claim(behind.id, "a", at(60), at(10))).toBe(false);
    expect(await store().runs.claim(head.run.id, "a", at(60), at(10))).toBe(true);
  });

  test("list by phase: queued, running and requires_action; listPending includes paused runs", async () => {
    const queued = await create({ createdAt: at(1) });
    const running = await create({ createdAt: at(2) });
    await store().runs.markStarted(running.id, at(3), 1);
    const waiting = await paused(0, at(600), { createdAt: at(3) });
    const done = await create({ createdAt: at(4) });
    await store().runs.markStarted(done.id, at(5), 1);
    await store().runs.complete(done.id, completion([]));

    const listed = async (phase: "queued" | "running" | "requires_action") =>
      ids((await store().runs.list(acme.id, { phase }, { limit: 10 })).items);
    expect(await listed("queued")).toEqual([queued.id]);
    expect(await listed("running")).toEqual([running.id]);
    expect(await listed("requires_action")).toEqual([waiting.run.id]);
    const [shown] = (await store().runs.list(acme.id, { phase: "requires_action" }, { limit: 10 })).items;
    expect(shown?.pause).toEqual(waiting.pause);

    const pending = await store().runs.listPending();
    expect(ids(pending)).toEqual([queued.id, running.id, waiting.run.id]);
    expect(pending[2]).toMatchObject({ pause: waiting.pause, steps: waiting.steps });
    expect(pending[0]?.pause).toBeNull();
  });

  test("the engine's frontier: paused runs apart, class pages without them, predecessors counting them", async () => {
    const thread = Bun.randomUUIDv7();
    const waiting = await paused(0, at(600), { threadId: thread, channel: "chat", createdAt: at(1) });
    const next = await create({ threadId: thread, channel: "chat", createdAt: at(2) });
    const ended = await paused(0, at(600), { createdAt: at(3) });
    await store().runs.fail(ended.run.id, {
      error: "expired",
      cost: null,
      finishedAt: at(9),
      deliveries: [],
    });

    const pausedRuns = await store().runs.listPaused();
    expect(ids(pausedRuns)).toEqual([waiting.run.id]);
    expect(pausedRuns[0]).toMatchObject({ pause: waiting.pause, steps: waiting.steps });
    const page = await store().runs.listPendingPage(acme.id, "normal", null, 10);
    expect(page.map((row) => [row.run.id, row.channelPredecessor])).toEqual([[next.id, waiting.run.id]]);
    expect(await store().runs.pendingOutline()).toEqual([
      { tenantId: acme.id, priority: "normal", count: 2 },
    ]);
  });

  test("memory keeps a tool exchange: tool calls and tool results in order, parts unchanged", async () => {
    const run = await create({ channel: "chat" });
    const exchange: MemoryMessage[] = [
      { role: "user", content: "Where is order 42?" },
      {
        role: "assistant",
        content: "Looking it up.",
        parts: [
          { type: "text", text: "Looking it up." },
          { type: "tool-call", toolCallId: "call_1", name: "lookup_order", arguments: { number: "42" } },
          { type: "tool-call", toolCallId: "call_2", name: "approve", arguments: {} },
        ],
      },
      {
        role: "tool",
        content: "",
        parts: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            name: "lookup_order",
            output: { status: "shipped", eta: null, items: [1, "two"] },
            isError: false,
          },
          { type: "tool-result", toolCallId: "call_2", name: "approve", output: "denied", isError: true },
        ],
      },
      { role: "assistant", content: "It shipped." },
    ];
    expect(await store().runs.complete(run.id, completion([step(0), step(1)], exchange))).toBe(true);

    expect(await store().runs.memory(acme.id, run.threadId, "chat")).toEqual({
      messages: exchange,
      dropped: 0,
    });
    const page = await store().runs.listMessages(acme.id, run.threadId, "chat", { limit: 10 });
    expect(page.items).toEqual(
      exchange.map((message) => ({ ...message, runId: run.id, channel: "chat", createdAt: at(100) })),
    );
    const thread = await store().runs.getThread(acme.id, run.threadId);
    expect(thread?.messages.map(({ role, content, runId }) => ({ role, content, runId }))).toEqual(
      exchange.map(({ role, content }) => ({ role, content, runId: run.id })),
    );
    // One run's rows are one exchange: a window too small for all four carries none of them.
    expect(
      await store().runs.memory(acme.id, run.threadId, "chat", { maxMessages: 3, maxBytes: 1_000_000 }),
    ).toEqual({ messages: [], dropped: 4 });
  });
};

/** The caller's output for the client tool call of step `index`'s pause. */
const clientResult = (index: number) => ({
  toolCallId: `client_${index}`,
  name: "approve",
  output: { approved: true },
  isError: false,
  executedBy: "client" as const,
});
