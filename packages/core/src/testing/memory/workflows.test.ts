import { expect, test } from "bun:test";
import type { NewWorkflowRun } from "../../workflows/ports.ts";
import { createMemoryStore } from "../memory-store.ts";
import { addTenant, at, newRun, pushPrompt } from "../store-fixtures.ts";

async function setUp() {
  const store = createMemoryStore();
  const tenant = await addTenant(store);
  const prompt = await pushPrompt(store, tenant.id);
  const { version } = await store.workflows.pushVersion({
    tenantId: tenant.id,
    slug: "flow",
    definition: { inputs: {}, steps: [{ id: "a", prompt: "greet" }] },
    contentHash: "h1",
    tags: ["production"],
    newWorkflowId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: at(0),
  });
  const workflowRun = (second: number, overrides: Partial<NewWorkflowRun> = {}): NewWorkflowRun => ({
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    workflowId: version.workflowId,
    workflowVersionId: version.id,
    workflowSlug: "flow",
    workflowVersion: 1,
    threadId: Bun.randomUUIDv7(),
    priority: "normal",
    environment: "production",
    inputs: {},
    metadata: {},
    encryptedEnvVars: "secret",
    promptVersions: { a: prompt.id },
    createdAt: at(second),
    steps: [
      {
        id: "a",
        status: "pending",
        runId: null,
        output: null,
        outputJson: null,
        error: null,
        startedAt: null,
        finishedAt: null,
      },
    ],
    ...overrides,
  });
  return { store, tenant, prompt, version, workflowRun };
}

test("push: an identical definition creates nothing; tags and versions resolve", async () => {
  const { store, tenant, version } = await setUp();
  const again = await store.workflows.pushVersion({
    tenantId: tenant.id,
    slug: "flow",
    definition: version.definition,
    contentHash: "h1",
    tags: ["beta"],
    newWorkflowId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: at(1),
  });
  expect(again).toMatchObject({ created: false, version: { id: version.id }, tags: ["beta", "production"] });
  expect((await store.workflows.resolveVersion(tenant.id, "flow", { kind: "tag", tag: "beta" }))?.id).toBe(
    version.id,
  );
  expect(await store.workflows.setTag(tenant.id, "flow", 2, "x", at(2))).toBeNull();
  expect(await store.workflows.resolveVersion("other", "flow", { kind: "latest" })).toBeNull();
});

test("advance: a compare-and-set on revision that inserts the step runs with the steps, all or nothing", async () => {
  const { store, prompt, workflowRun } = await setUp();
  const run = workflowRun(1);
  await store.workflows.createRun(run);
  const stepRun = newRun(prompt, { threadId: run.threadId, workflowRun: { id: run.id, step: "a" } });
  const steps = [{ ...run.steps[0]!, status: "running" as const, runId: stepRun.id, startedAt: at(2) }];

  // A step run whose prompt version does not exist: refused, nothing written.
  const broken = newRun(prompt, { promptVersionId: Bun.randomUUIDv7() });
  await expect(store.workflows.advance(run.id, 0, { steps, newRuns: [broken] })).rejects.toMatchObject({
    code: "invalid",
  });
  expect((await store.workflows.getRunById(run.id))?.revision).toBe(0);

  expect(await store.workflows.advance(run.id, 0, { steps, newRuns: [stepRun], startedAt: at(2) })).toBe(
    true,
  );
  expect(await store.workflows.advance(run.id, 0, { steps, newRuns: [] })).toBe(false);
  const stored = (await store.workflows.getRunById(run.id))!;
  expect(stored).toMatchObject({
    revision: 1,
    startedAt: at(2),
    steps: [{ status: "running", runId: stepRun.id }],
  });
  expect((await store.runs.getById(stepRun.id))?.workflowRun).toEqual({ id: run.id, step: "a" });

  const end = {
    status: "failed" as const,
    output: null,
    outputJson: null,
    error: "cancelled",
    tokenUsage: null,
    cost: null,
    finishedAt: at(3),
    deliveries: [],
  };
  expect(await store.workflows.advance(run.id, 1, { steps, newRuns: [], end })).toBe(true);
  expect(await store.workflows.getRunById(run.id)).toMatchObject({
    status: "failed",
    encryptedEnvVars: null,
  });
  expect(await store.workflows.advance(run.id, 2, { steps, newRuns: [] })).toBe(false);
  expect(await store.workflows.listOrphanedStepRuns(10)).toEqual([stepRun.id]);
  expect(await store.workflows.listPendingRunIds()).toEqual([]);
});

test("runs: idempotency keys, tenant scoping, filters and a keyset cursor, newest first", async () => {
  const { store, tenant, workflowRun } = await setUp();
  const runs = [workflowRun(1), workflowRun(2), workflowRun(3, { environment: "staging" })];
  const key = { tenantId: tenant.id, key: "k", requestHash: "h", threadId: "t", createdAt: at(1) };
  await store.workflows.createRun(runs[0]!, { ...key, runId: runs[0]!.id });
  await expect(store.workflows.createRun(runs[1]!, { ...key, runId: runs[1]!.id })).rejects.toMatchObject({
    code: "conflict",
  });
  await store.workflows.createRun(runs[1]!);
  await store.workflows.createRun(runs[2]!);
  expect((await store.workflows.findIdempotency(tenant.id, "k", at(0)))?.runId).toBe(runs[0]!.id);
  expect(await store.workflows.getRun("other", runs[0]!.id)).toBeNull();

  const first = await store.workflows.listRuns(tenant.id, {}, { limit: 2 });
  expect(first.items.map((run) => run.id)).toEqual([runs[2]!.id, runs[1]!.id]);
  const second = await store.workflows.listRuns(tenant.id, {}, { cursor: first.nextCursor, limit: 2 });
  expect(second).toMatchObject({ items: [{ id: runs[0]!.id }], nextCursor: null });
  const staging = await store.workflows.listRuns(tenant.id, { environment: "staging" }, { limit: 10 });
  expect(staging.items.map((run) => run.id)).toEqual([runs[2]!.id]);
  await expect(store.workflows.listRuns(tenant.id, {}, { cursor: "nope", limit: 2 })).rejects.toMatchObject({
    code: "invalid",
  });
  expect(await store.workflows.listPendingRunIds()).toEqual(runs.map((run) => run.id));
});
