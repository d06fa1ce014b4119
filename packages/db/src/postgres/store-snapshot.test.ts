import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { RunStepRecord, Store, TenantRecord } from "@promptrun/core";
import { addTenant, at, idempotencyFor, newRun, push } from "@promptrun/core/testing";
import { addReady, knowledgeBase, newDocument } from "../conformance/knowledge-fixtures.ts";
import type { SqliteStore } from "../sqlite/open.ts";
import { openTempStore } from "../sqlite/test-fixtures.ts";
import { openPostgresStore, type PostgresStore } from "./open.ts";
import { exportAll, importAll } from "./store-snapshot.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

const available = await checkPostgres();

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };

/** A model call that asked for a client tool (a step as stored, ISO timestamps inside). */
const toolStep = (index: number): RunStepRecord => ({
  index,
  attempts: 1,
  model: "dev:echo",
  text: "",
  toolCalls: [{ id: `call_${index}`, name: "approve", arguments: { amount: index } }],
  toolResults: [],
  finishReason: "tool-calls",
  usage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
  cost: { success: zeroBlock, retries: zeroBlock, total: 0 },
  startedAt: at(index).toISOString(),
  finishedAt: at(index + 1).toISOString(),
  tokens: 0,
});

/** A bit of everything, written through the port. */
const fill = async (store: Store): Promise<{ tenant: TenantRecord; threadId: string }> => {
  const tenant = await addTenant(store, "acme");
  await store.tenants.createApiKey({
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    prefix: "pr_live_abcd",
    hash: "f".repeat(64),
    createdAt: at(1),
    revokedAt: null,
    lastUsedAt: null,
  });
  await push(store, tenant.id, "greet", "v1", ["stable"]);
  const { version } = await push(store, tenant.id, "greet", "v2", ["production"], 2);
  await store.prompts.deleteTag(tenant.id, "greet", "stable", at(3), "pr_live_abcd");
  const environment = await store.environments.ensure(tenant.id, "production", Bun.randomUUIDv7(), at(0));
  await store.environments.setEnvVars(environment.id, { OPENAI_API_KEY: "encrypted" }, at(3));
  const webhookId = Bun.randomUUIDv7();
  await store.webhooks.create({
    id: webhookId,
    tenantId: tenant.id,
    environmentId: environment.id,
    environment: environment.name,
    url: "https://example.com/hook",
    encryptedSecret: "encrypted-whsec",
    events: ["run.completed"],
    enabled: true,
    failureStreak: 0,
    createdAt: at(4),
  });
  const threadId = Bun.randomUUIDv7();
  for (let index = 0; index < 3; index++) {
    const run = newRun(version, {
      threadId,
      createdAt: at(10 + index),
      metadata: { z: "1", a: [`${index}`] },
    });
    await store.runs.create(run, idempotencyFor(run, `key-${index}`));
    if (index === 2) {
      // Left waiting for tool outputs: its steps and pause are copied too.
      await store.runs.pause(run.id, {
        steps: [toolStep(0)],
        pause: {
          step: 0,
          requiredAction: {
            type: "submit_tool_outputs",
            toolCalls: toolStep(0).toolCalls,
            expiresAt: at(600).toISOString(),
          },
          expiresAt: at(600),
        },
        deliveries: [],
      });
      continue;
    }
    const deliveryId = Bun.randomUUIDv7();
    await store.runs.complete(run.id, {
      output: `answer ${index}`,
      tokenUsage: { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 },
      cost: { success: zeroBlock, retries: zeroBlock, total: 0 },
      finishedAt: at(20 + index),
      steps: [toolStep(0), { ...toolStep(1), toolCalls: [], finishReason: "stop", text: `answer ${index}` }],
      memory: [
        { role: "user", content: `question ${index}` },
        { role: "assistant", content: `answer ${index}` },
      ],
      deliveries: [
        {
          id: deliveryId,
          webhookId,
          tenantId: tenant.id,
          runId: run.id,
          eventId: null,
          eventType: "run.completed",
          payload: "{}",
          status: "pending",
          attempts: 0,
          nextAttemptAt: at(30),
          createdAt: at(30),
        },
      ],
    });
    await store.webhooks.recordAttempt(
      {
        id: Bun.randomUUIDv7(),
        deliveryId,
        attempt: 1,
        attemptedAt: at(31),
        responseStatus: 200,
        latencyMs: 3.25,
        error: null,
      },
      { status: "delivered", nextAttemptAt: null, failureStreak: 0, disable: false },
    );
  }
  // A prompt event's delivery: its body lives in webhook_events.
  await store.webhooks.enqueueDeliveries([
    {
      id: Bun.randomUUIDv7(),
      webhookId,
      tenantId: tenant.id,
      runId: null,
      eventId: Bun.randomUUIDv7(),
      eventType: "prompt.version.created",
      payload: JSON.stringify({ type: "prompt.version.created", data: { slug: "greet", version: 2 } }),
      status: "pending",
      attempts: 0,
      nextAttemptAt: at(50),
      createdAt: at(50),
    },
  ]);
  await fillKnowledge(store, tenant.id);
  await fillWorkflows(store);
  return { tenant, threadId };
};

/** Another tenant's workflow (tagged), and its ended run with its step run and idempotency key. */
const fillWorkflows = async (store: Store): Promise<void> => {
  const tenant = await addTenant(store, "globex");
  const { version: prompt } = await push(store, tenant.id, "classify", "classify it");
  const { version } = await store.workflows.pushVersion({
    tenantId: tenant.id,
    slug: "triage",
    definition: { description: "copied", inputs: {}, steps: [{ id: "classify", prompt: "classify" }] },
    contentHash: "hash-of-triage",
    tags: ["production"],
    newWorkflowId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: at(70),
  });
  const run = {
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    workflowId: version.workflowId,
    workflowVersionId: version.id,
    workflowSlug: "triage",
    workflowVersion: 1,
    threadId: Bun.randomUUIDv7(),
    priority: "normal" as const,
    environment: "production",
    inputs: { ticket: "help" },
    metadata: {},
    encryptedEnvVars: "encrypted",
    promptVersions: { classify: prompt.id },
    createdAt: at(71),
    steps: [],
  };
  await store.workflows.createRun(run, {
    tenantId: tenant.id,
    key: "workflow-key",
    requestHash: "hash",
    runId: run.id,
    threadId: run.threadId,
    createdAt: at(71),
  });
  const stepRun = newRun(prompt, {
    threadId: run.threadId,
    channel: "classify",
    createdAt: at(72),
    workflowRun: { id: run.id, step: "classify" },
  });
  const step = {
    id: "classify",
    status: "failed" as const,
    runId: stepRun.id,
    output: null,
    outputJson: null,
    error: "boom",
    startedAt: at(72),
    finishedAt: at(73),
  };
  await store.workflows.advance(run.id, 0, { steps: [{ ...step, status: "running" }], newRuns: [stepRun] });
  await store.runs.fail(stepRun.id, { error: "boom", cost: null, finishedAt: at(73), deliveries: [] });
  const end = {
    status: "failed" as const,
    output: null,
    outputJson: null,
    error: "step 'classify' failed: boom",
  };
  await store.workflows.advance(run.id, 1, {
    steps: [step],
    newRuns: [],
    end: { ...end, tokenUsage: null, cost: null, finishedAt: at(74), deliveries: [] },
  });
};

/** A knowledge base with a ready document (chunks, vectors) and a pending one (its upload). */
const fillKnowledge = async (store: Store, tenantId: string): Promise<void> => {
  const base = knowledgeBase(tenantId, "docs");
  await store.knowledge.createKnowledgeBase(base);
  await addReady(store, base, ["copied chunk one", "copied chunk two"], { metadata: { lang: ["en"] } });
  await store.knowledge.addDocument(newDocument(base, { createdAt: at(60), externalId: "later" }));
};

describe.skipIf(!available)("exportAll / importAll", () => {
  let database: TestDatabase;
  let sqlite: { store: SqliteStore; dispose(): Promise<void> } | null = null;
  let postgres: PostgresStore | null = null;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await sqlite?.dispose();
    await postgres?.close();
    sqlite = null;
    postgres = null;
    await database.truncate();
  });
  afterAll(() => database?.drop());

  test("copies a SQLite store into Postgres row for row, and Postgres carries on from there", async () => {
    sqlite = await openTempStore();
    const { tenant, threadId } = await fill(sqlite.store);
    const snapshot = await exportAll(sqlite.store);
    expect(snapshot.messages).toHaveLength(4);
    expect(snapshot.webhookAttempts).toHaveLength(2);
    expect(snapshot.promptTagHistory).toHaveLength(3);
    expect(snapshot.promptTagHistory.map((move) => [move.tag, move.version, move.movedBy])).toEqual(
      expect.arrayContaining([
        ["production", 2, "cli"],
        ["stable", 1, "cli"],
        ["stable", null, "pr_live_abcd"],
      ]),
    );
    expect(snapshot.webhookEvents).toHaveLength(1);
    expect(snapshot.kbChunks).toHaveLength(2);
    expect(snapshot.kbDocuments).toHaveLength(2);
    expect(snapshot.workflowRuns).toHaveLength(1);
    expect(snapshot.workflowTags).toHaveLength(1);
    expect(snapshot.workflowIdempotencyKeys).toHaveLength(1);

    postgres = await openPostgresStore({ url: database.url });
    await importAll(postgres, snapshot);
    expect(await exportAll(postgres)).toEqual(snapshot);

    // The copy answers through the port as the original did.
    expect(await postgres.runs.getThread(tenant.id, threadId)).toEqual(
      await sqlite.store.runs.getThread(tenant.id, threadId),
    );
    expect((await postgres.tenants.findApiKeyByHash("f".repeat(64)))?.tenant).toEqual(tenant);
    const pending = await postgres.runs.listPending();
    expect(pending.map((run) => run.metadata)).toEqual([{ z: "1", a: ["2"] }]);
    expect(pending).toEqual(await sqlite.store.runs.listPending());
    expect(pending[0]?.pause?.step).toBe(0);
    // Knowledge: the keyword index (tsvector) and the vectors answer as in SQLite.
    const [base] = snapshot.knowledgeBases;
    expect(await postgres.knowledge.keywordSearch(base!.id, "copied", 5)).toHaveLength(2);
    expect(await postgres.knowledge.loadVectors(base!.id)).toEqual(
      await sqlite.store.knowledge.loadVectors(base!.id),
    );
    const copiedRuns = (await postgres.runs.list(tenant.id, {}, { limit: 10 })).items;
    expect(copiedRuns).toEqual((await sqlite.store.runs.list(tenant.id, {}, { limit: 10 })).items);
    expect(copiedRuns.map((run) => run.steps.length)).toEqual([1, 2, 2]);
    // Workflow runs, and their step runs' link, read back as in SQLite.
    const [workflowRun] = snapshot.workflowRuns;
    const copiedWorkflowRun = await postgres.workflows.getRunById(workflowRun!.id);
    expect(copiedWorkflowRun).toEqual(await sqlite.store.workflows.getRunById(workflowRun!.id));
    expect(copiedWorkflowRun?.steps[0]?.finishedAt).toEqual(at(73));
    const stepRunId = copiedWorkflowRun?.steps[0]?.runId ?? "";
    expect((await postgres.runs.getById(stepRunId))?.workflowRun).toEqual({
      id: workflowRun!.id,
      step: "classify",
    });
    // New memory lands after the copied messages.
    await postgres.runs.complete(pending[0]!.id, {
      output: "answer 2",
      tokenUsage: { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 },
      cost: { success: zeroBlock, retries: zeroBlock, total: 0 },
      finishedAt: at(40),
      memory: [{ role: "assistant", content: "answer 2" }],
      deliveries: [],
      steps: [],
    });
    expect(
      (await postgres.runs.memory(tenant.id, threadId, "default")).messages.map((message) => message.content),
    ).toEqual(["question 0", "answer 0", "question 1", "answer 1", "answer 2"]);
    // And back: a Postgres snapshot loads into a fresh SQLite store.
    const back = await openTempStore();
    try {
      const fromPostgres = await exportAll(postgres);
      await importAll(back.store, fromPostgres);
      expect(await exportAll(back.store)).toEqual(fromPostgres);
      // The FTS5 index was refilled by its triggers.
      expect(
        await back.store.knowledge.keywordSearch(fromPostgres.knowledgeBases[0]!.id, "copied", 5),
      ).toHaveLength(2);
    } finally {
      await back.dispose();
    }
  });

  test("a store that already has data is refused", async () => {
    sqlite = await openTempStore();
    await fill(sqlite.store);
    const snapshot = await exportAll(sqlite.store);
    postgres = await openPostgresStore({ url: database.url });
    await addTenant(postgres, "already here");
    await expect(importAll(postgres, snapshot)).rejects.toMatchObject({ code: "conflict" });
    await expect(importAll(sqlite.store, snapshot)).rejects.toMatchObject({ code: "conflict" });
    expect(await postgres.tenants.list()).toHaveLength(1);
  });
});
