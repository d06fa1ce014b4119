/**
 * The WorkflowStore port (packages/core/src/workflows/ports.ts, docs/WORKFLOWS.md "Storage"):
 * definitions versioned and tagged like prompts, workflow runs with their idempotency, the
 * compare-and-set `advance` with its step runs and outbox rows, and the recovery lists.
 */
import { beforeEach, expect, test } from "bun:test";
import type { WorkflowDefinition } from "@promptrun/contract";
import type {
  NewWorkflowRun,
  PromptVersionRecord,
  TenantRecord,
  WebhookDeliveryRecord,
  WorkflowStepRecord,
  WorkflowVersionRecord,
} from "@promptrun/core";
import { addTenant, at, newRun, pushPrompt } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

const definitionOf = (description: string): WorkflowDefinition => ({
  description,
  inputs: {},
  steps: [
    { id: "classify", prompt: "greet" },
    { id: "answer", prompt: "greet@production", when: "steps.classify.output != ''" },
  ],
});

const pendingSteps = (): WorkflowStepRecord[] =>
  ["classify", "answer"].map((id) => ({
    id,
    status: "pending",
    runId: null,
    output: null,
    outputJson: null,
    error: null,
    startedAt: null,
    finishedAt: null,
  }));

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };

export const workflowConformance = (context: ConformanceContext): void => {
  const { store } = context;
  const wf = () => store().workflows;
  let acme: TenantRecord;
  let prompt: PromptVersionRecord;

  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    prompt = await pushPrompt(store(), acme.id);
  });

  const push = (
    text: string,
    tags: string[] = [],
    options: { slug?: string; tenantId?: string; second?: number } = {},
  ) =>
    wf().pushVersion({
      tenantId: options.tenantId ?? acme.id,
      slug: options.slug ?? "triage",
      definition: definitionOf(text),
      contentHash: `hash-of-${text}`,
      tags,
      newWorkflowId: Bun.randomUUIDv7(),
      newVersionId: Bun.randomUUIDv7(),
      at: at(options.second ?? 1),
    });

  const newWorkflowRun = (
    version: WorkflowVersionRecord,
    overrides: Partial<NewWorkflowRun> = {},
  ): NewWorkflowRun => ({
    id: Bun.randomUUIDv7(),
    tenantId: version.tenantId,
    workflowId: version.workflowId,
    workflowVersionId: version.id,
    workflowSlug: version.slug,
    workflowVersion: version.version,
    threadId: Bun.randomUUIDv7(),
    priority: "normal",
    environment: "production",
    inputs: { ticket: "my printer is on fire" },
    metadata: { team: "support" },
    encryptedEnvVars: "encrypted-env",
    promptVersions: { classify: prompt.id, answer: prompt.id },
    createdAt: at(10),
    steps: pendingSteps(),
    ...overrides,
  });

  const createdRun = async (overrides: Partial<NewWorkflowRun> = {}) => {
    const { version } = await push("v1");
    const run = newWorkflowRun(version, overrides);
    await wf().createRun(run);
    return run;
  };

  const idempotencyOf = (run: NewWorkflowRun, key: string, createdAt = run.createdAt) => ({
    tenantId: run.tenantId,
    key,
    requestHash: `request-${key}`,
    runId: run.id,
    threadId: run.threadId,
    createdAt,
  });

  // ------------------------------------------------------------------ definitions

  test("a push creates version 1; the same content again creates nothing; new content is version 2", async () => {
    const first = await push("v1", ["production"]);
    expect(first).toMatchObject({ created: true, tags: ["production"] });
    expect(first.version).toMatchObject({
      slug: "triage",
      version: 1,
      tenantId: acme.id,
      contentHash: "hash-of-v1",
    });
    expect(first.version.definition).toEqual(definitionOf("v1"));
    const again = await push("v1", ["stable"]);
    expect(again.created).toBe(false);
    expect(again.version).toEqual(first.version);
    expect(again.tags).toEqual(["production", "stable"]);
    const second = await push("v2", ["production"], { second: 2 });
    expect(second.version).toMatchObject({ version: 2, workflowId: first.version.workflowId });
    expect(await wf().tagsOf(first.version.id)).toEqual(["stable"]);
    expect(await wf().tagsOf(second.version.id)).toEqual(["production"]);
    expect(await wf().getWorkflow(acme.id, "triage")).toEqual({
      id: first.version.workflowId,
      tenantId: acme.id,
      slug: "triage",
      latestVersion: 2,
      description: "v2",
      tags: { production: 2, stable: 1 },
      createdAt: at(1),
      updatedAt: at(2),
    });
  });

  test("versions resolve by id, number, latest and tag; setTag moves a tag; unknown ones are null", async () => {
    const { version: one } = await push("v1", ["production"]);
    const { version: two } = await push("v2", [], { second: 2 });
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "id", id: one.id })).toEqual(one);
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "number", version: 2 })).toEqual(two);
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "latest" })).toEqual(two);
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "tag", tag: "production" })).toEqual(one);
    expect(await wf().setTag(acme.id, "triage", 2, "production", at(3))).toEqual(two);
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "tag", tag: "production" })).toEqual(two);
    expect(await wf().setTag(acme.id, "triage", 9, "production", at(3))).toBeNull();
    expect(await wf().setTag(acme.id, "nope", 1, "production", at(3))).toBeNull();
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "number", version: 9 })).toBeNull();
    expect(await wf().resolveVersion(acme.id, "triage", { kind: "tag", tag: "nope" })).toBeNull();
    expect(await wf().resolveVersion(acme.id, "nope", { kind: "latest" })).toBeNull();
    expect(await wf().getWorkflow(acme.id, "nope")).toBeNull();
  });

  test("workflows list in slug order and versions newest first, with keyset cursors", async () => {
    for (const slug of ["c-flow", "a-flow", "b-flow"]) await push(slug, [], { slug });
    const first = await wf().listWorkflows(acme.id, { limit: 2 });
    expect(first.items.map((item) => item.slug)).toEqual(["a-flow", "b-flow"]);
    const rest = await wf().listWorkflows(acme.id, { cursor: first.nextCursor, limit: 2 });
    expect(rest.items.map((item) => item.slug)).toEqual(["c-flow"]);
    expect(rest.nextCursor).toBeNull();
    for (const text of ["v1", "v2", "v3"]) await push(text);
    const newest = await wf().listVersions(acme.id, "triage", { limit: 2 });
    expect(newest.items.map((item) => item.version)).toEqual([3, 2]);
    const oldest = await wf().listVersions(acme.id, "triage", { cursor: newest.nextCursor, limit: 2 });
    expect(oldest.items.map((item) => item.version)).toEqual([1]);
    expect(oldest.nextCursor).toBeNull();
    await expect(wf().listWorkflows(acme.id, { cursor: "garbage", limit: 2 })).rejects.toMatchObject({
      code: "invalid",
    });
  });

  // ------------------------------------------------------------------ runs

  test("a created run reads back pending at revision 0, steps and pinned prompt versions kept", async () => {
    const run = await createdRun();
    const stored = await wf().getRun(acme.id, run.id);
    expect(stored).toEqual({
      ...run,
      status: "pending",
      startedAt: null,
      finishedAt: null,
      output: null,
      outputJson: null,
      error: null,
      tokenUsage: null,
      cost: null,
      revision: 0,
    });
    expect(await wf().getRunById(run.id)).toEqual(stored);
    expect(await wf().listPendingRunIds()).toEqual([run.id]);
  });

  test("an Idempotency-Key taken by a fresh record is a conflict (nothing written); an expired one is replaced", async () => {
    const { version } = await push("v1");
    const first = newWorkflowRun(version);
    await wf().createRun(first, idempotencyOf(first, "key-1"));
    expect(await wf().findIdempotency(acme.id, "key-1", at(0))).toEqual(idempotencyOf(first, "key-1"));
    expect(await wf().findIdempotency(acme.id, "key-1", at(11))).toBeNull();

    const second = newWorkflowRun(version, { createdAt: at(20) });
    await expect(wf().createRun(second, idempotencyOf(second, "key-1"))).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(
      wf().createRun(second, idempotencyOf(second, "key-1"), { idempotencyExpiredBefore: at(5) }),
    ).rejects.toMatchObject({ code: "conflict" });
    expect(await wf().getRunById(second.id)).toBeNull();

    await wf().createRun(second, idempotencyOf(second, "key-1"), { idempotencyExpiredBefore: at(15) });
    expect(await wf().findIdempotency(acme.id, "key-1", at(0))).toEqual(idempotencyOf(second, "key-1"));
    expect(await wf().listPendingRunIds()).toEqual([first.id, second.id]);
  });

  test("advance is a compare-and-set on the revision: a stale revision writes nothing", async () => {
    const run = await createdRun();
    const steps = pendingSteps().map((step) =>
      step.id === "classify" ? { ...step, status: "running" as const, startedAt: at(11) } : step,
    );
    expect(await wf().advance(run.id, 0, { steps, startedAt: at(11), newRuns: [] })).toBe(true);
    const advanced = await wf().getRunById(run.id);
    expect(advanced).toMatchObject({ revision: 1, startedAt: at(11), status: "pending" });
    expect(advanced?.steps).toEqual(steps);

    const stale = newRun(prompt, { threadId: run.threadId, workflowRun: { id: run.id, step: "answer" } });
    expect(
      await wf().advance(run.id, 0, {
        steps: pendingSteps(),
        newRuns: [stale],
        end: {
          status: "failed",
          output: null,
          outputJson: null,
          error: "late",
          tokenUsage: null,
          cost: null,
          finishedAt: at(12),
          deliveries: [],
        },
      }),
    ).toBe(false);
    expect(await wf().getRunById(run.id)).toEqual(advanced);
    expect(await store().runs.getById(stale.id)).toBeNull();
    expect(await wf().advance(Bun.randomUUIDv7(), 0, { steps, newRuns: [] })).toBe(false);
  });

  test("of two advances from the same revision at once, exactly one wins and only its step run exists", async () => {
    const run = await createdRun();
    const contenders = ["classify", "answer"].map((step) =>
      newRun(prompt, { threadId: run.threadId, workflowRun: { id: run.id, step } }),
    );
    const outcomes = await Promise.all(
      contenders.map((stepRun) => wf().advance(run.id, 0, { steps: pendingSteps(), newRuns: [stepRun] })),
    );
    expect(outcomes.toSorted()).toEqual([false, true]);
    const winner = contenders[outcomes.indexOf(true)]!;
    const loser = contenders[outcomes.indexOf(false)]!;
    expect(await store().runs.getById(winner.id)).not.toBeNull();
    expect(await store().runs.getById(loser.id)).toBeNull();
    expect((await wf().getRunById(run.id))?.revision).toBe(1);
  });

  test("an advance inserts its step runs with the steps JSON, in one transaction", async () => {
    const run = await createdRun();
    const stepRun = newRun(prompt, {
      threadId: run.threadId,
      channel: "classify",
      createdAt: at(11),
      workflowRun: { id: run.id, step: "classify" },
    });
    const steps = pendingSteps().map((step) =>
      step.id === "classify"
        ? { ...step, status: "running" as const, runId: stepRun.id, startedAt: at(11) }
        : step,
    );
    expect(await wf().advance(run.id, 0, { steps, startedAt: at(11), newRuns: [stepRun] })).toBe(true);
    expect((await wf().getRunById(run.id))?.steps).toEqual(steps);
    expect(await store().runs.getById(stepRun.id)).toMatchObject({
      id: stepRun.id,
      status: "pending",
      threadId: run.threadId,
      channel: "classify",
      workflowRun: { id: run.id, step: "classify" },
    });
    expect((await store().runs.list(acme.id, { threadId: run.threadId }, { limit: 10 })).items).toHaveLength(
      1,
    );

    // A step run that cannot be written (its prompt version is unknown) fails the whole advance.
    const broken = newRun(prompt, {
      threadId: run.threadId,
      promptVersionId: Bun.randomUUIDv7(),
      workflowRun: { id: run.id, step: "answer" },
    });
    await expect(wf().advance(run.id, 1, { steps: pendingSteps(), newRuns: [broken] })).rejects.toThrow();
    expect(await wf().getRunById(run.id)).toMatchObject({ revision: 1, steps });
  });

  test("an ordinary run reads back with no workflow run", async () => {
    const run = newRun(prompt);
    await store().runs.create(run);
    expect((await store().runs.getById(run.id))?.workflowRun ?? null).toBeNull();
  });

  test("the end writes the outcome, erases the envVars and queues its webhooks (body stored once)", async () => {
    const production = await store().environments.ensure(acme.id, "production", Bun.randomUUIDv7(), at(0));
    const webhookIds = [Bun.randomUUIDv7(), Bun.randomUUIDv7()];
    for (const id of webhookIds) {
      await store().webhooks.create({
        id,
        tenantId: acme.id,
        environmentId: production.id,
        environment: "production",
        url: `https://example.com/${id}`,
        encryptedSecret: "encrypted-whsec",
        events: ["workflow.completed"],
        enabled: true,
        failureStreak: 0,
        createdAt: at(0),
      });
    }
    const run = await createdRun();
    const eventId = Bun.randomUUIDv7();
    const payload = JSON.stringify({ type: "workflow.completed", data: { id: run.id } });
    const deliveries: WebhookDeliveryRecord[] = webhookIds.map((webhookId) => ({
      id: Bun.randomUUIDv7(),
      webhookId,
      tenantId: acme.id,
      runId: null,
      eventId,
      eventType: "workflow.completed",
      payload,
      status: "pending",
      attempts: 0,
      nextAttemptAt: at(30),
      createdAt: at(30),
    }));
    const usage = { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 };
    const cost = { success: zeroBlock, retries: zeroBlock, total: 0 };
    const end = {
      status: "completed" as const,
      output: "done",
      outputJson: { answer: 42 },
      error: null,
      tokenUsage: usage,
      cost,
      finishedAt: at(30),
      deliveries,
    };
    expect(await wf().advance(run.id, 0, { steps: pendingSteps(), newRuns: [], end })).toBe(true);
    expect(await wf().getRunById(run.id)).toMatchObject({
      status: "completed",
      output: "done",
      outputJson: { answer: 42 },
      error: null,
      tokenUsage: usage,
      cost,
      finishedAt: at(30),
      encryptedEnvVars: null,
      revision: 1,
    });
    expect(await store().webhooks.getEventPayload(eventId)).toBe(payload);
    const due = await store().webhooks.dueDeliveries(at(31), 10);
    expect(due.map((row) => [row.webhookId, row.eventId, row.runId]).toSorted()).toEqual(
      webhookIds.map((id) => [id, eventId, null]).toSorted(),
    );
    expect(await wf().listPendingRunIds()).toEqual([]);
    // An ended run never advances again.
    expect(await wf().advance(run.id, 1, { steps: pendingSteps(), newRuns: [] })).toBe(false);
  });

  test("pending step runs of an ended workflow run are orphans, oldest first, at most the limit", async () => {
    const run = await createdRun();
    const stepRuns = ["classify", "answer"].map((step, index) =>
      newRun(prompt, {
        threadId: run.threadId,
        createdAt: at(11 + index),
        workflowRun: { id: run.id, step },
      }),
    );
    expect(await wf().advance(run.id, 0, { steps: pendingSteps(), newRuns: stepRuns })).toBe(true);
    const other = await createdRun({ createdAt: at(12) });
    const live = newRun(prompt, {
      threadId: other.threadId,
      workflowRun: { id: other.id, step: "classify" },
    });
    await wf().advance(other.id, 0, { steps: pendingSteps(), newRuns: [live] });
    await store().runs.create(newRun(prompt));
    expect(await wf().listOrphanedStepRuns(10)).toEqual([]);

    const end = {
      status: "failed" as const,
      output: null,
      outputJson: null,
      error: "cancelled",
      tokenUsage: null,
      cost: null,
      finishedAt: at(20),
      deliveries: [],
    };
    expect(await wf().advance(run.id, 1, { steps: pendingSteps(), newRuns: [], end })).toBe(true);
    expect(await wf().listOrphanedStepRuns(10)).toEqual(stepRuns.map((stepRun) => stepRun.id));
    expect(await wf().listOrphanedStepRuns(1)).toEqual([stepRuns[0]!.id]);
    await store().runs.fail(stepRuns[0]!.id, {
      error: "cancelled",
      cost: null,
      finishedAt: at(21),
      deliveries: [],
    });
    expect(await wf().listOrphanedStepRuns(10)).toEqual([stepRuns[1]!.id]);
  });

  test("runs list newest first with filters and a keyset cursor; a bad cursor is invalid", async () => {
    const { version: one } = await push("v1");
    const { version: two } = await push("v2", [], { second: 2 });
    const threadId = Bun.randomUUIDv7();
    const created: NewWorkflowRun[] = [];
    for (let index = 0; index < 5; index++) {
      const run = newWorkflowRun(index % 2 === 0 ? one : two, {
        createdAt: at(10 + index),
        environment: index === 4 ? "staging" : "production",
        ...(index < 2 ? { threadId } : {}),
      });
      await wf().createRun(run);
      created.push(run);
    }
    const ids = (items: { id: string }[]) => items.map((item) => item.id);
    const newestFirst = created.map((run) => run.id).toReversed();
    const first = await wf().listRuns(acme.id, {}, { limit: 2 });
    expect(ids(first.items)).toEqual(newestFirst.slice(0, 2));
    const second = await wf().listRuns(acme.id, {}, { cursor: first.nextCursor, limit: 2 });
    expect(ids(second.items)).toEqual(newestFirst.slice(2, 4));
    const last = await wf().listRuns(acme.id, {}, { cursor: second.nextCursor, limit: 2 });
    expect(ids(last.items)).toEqual(newestFirst.slice(4));
    expect(last.nextCursor).toBeNull();

    const list = async (filter: Parameters<ReturnType<typeof wf>["listRuns"]>[1]) =>
      ids((await wf().listRuns(acme.id, filter, { limit: 10 })).items);
    expect(await list({ version: 2 })).toEqual([created[3]!.id, created[1]!.id]);
    expect(await list({ slug: "triage", threadId })).toEqual([created[1]!.id, created[0]!.id]);
    expect(await list({ slug: "other" })).toEqual([]);
    expect(await list({ environment: "staging" })).toEqual([created[4]!.id]);
    expect(await list({ createdAfter: at(11), createdBefore: at(13) })).toEqual([
      created[2]!.id,
      created[1]!.id,
    ]);
    await wf().advance(created[2]!.id, 0, {
      steps: pendingSteps(),
      newRuns: [],
      end: {
        status: "failed",
        output: null,
        outputJson: null,
        error: "boom",
        tokenUsage: null,
        cost: null,
        finishedAt: at(20),
        deliveries: [],
      },
    });
    expect(await list({ status: "failed" })).toEqual([created[2]!.id]);
    expect(await list({ status: "pending" })).toHaveLength(4);
    await expect(wf().listRuns(acme.id, {}, { cursor: "garbage", limit: 2 })).rejects.toMatchObject({
      code: "invalid",
    });
  });

  test("another tenant sees none of it", async () => {
    const globex = await addTenant(store(), "globex");
    const run = await createdRun();
    const { version } = await push("v1");
    expect(await wf().getWorkflow(globex.id, "triage")).toBeNull();
    expect((await wf().listWorkflows(globex.id, { limit: 10 })).items).toEqual([]);
    expect((await wf().listVersions(globex.id, "triage", { limit: 10 })).items).toEqual([]);
    expect(await wf().resolveVersion(globex.id, "triage", { kind: "id", id: version.id })).toBeNull();
    expect(await wf().setTag(globex.id, "triage", 1, "production", at(3))).toBeNull();
    expect(await wf().getRun(globex.id, run.id)).toBeNull();
    expect((await wf().listRuns(globex.id, {}, { limit: 10 })).items).toEqual([]);
    // The same slug is free in another tenant, numbered from 1 there.
    const theirs = await push("v1", [], { tenantId: globex.id });
    expect(theirs).toMatchObject({ created: true, version: { version: 1, tenantId: globex.id } });
    expect(theirs.version.workflowId).not.toBe(version.workflowId);
  });
};
