import { expect, test } from "bun:test";
import { type ThreadEvent, webhookPayloadSchema, workflowFileSchema } from "@promptrun/contract";
import { createInMemoryThreadEventBus } from "../../events/index.ts";
import { createTokenBucketRateLimiter } from "../../rate-limit/token-bucket.ts";
import { createSecretBox } from "../../security/secret-box.ts";
import { createMemoryStore } from "../../testing/memory-store.ts";
import { recordingEngine } from "../../testing/recording-engine.ts";
import { addTenant, push } from "../../testing/store-fixtures.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { createWorkflowRuns } from "./create-workflow-runs.ts";
import { config } from "./workflow-runs-test-fixture.ts";

async function setUp() {
  const store = createMemoryStore();
  const clock = { now: () => new Date() };
  const events = createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock });
  const engine = recordingEngine({ store });
  const secrets = createSecretBox(config.secret);
  const instance = () =>
    createWorkflowRuns({
      store,
      config,
      clock,
      engine,
      events,
      secrets,
      rateLimits: createTokenBucketRateLimiter({ rateLimit: config.rateLimit, clock }),
    });
  const [one, two] = [instance(), instance()];
  const tenant = await addTenant(store);
  const environment = await store.environments.ensure(
    tenant.id,
    "production",
    Bun.randomUUIDv7(),
    new Date(),
  );
  await store.webhooks.create({
    id: Bun.randomUUIDv7(),
    tenantId: tenant.id,
    environmentId: environment.id,
    environment: "production",
    url: "https://hooks.example.com/in",
    encryptedSecret: secrets.encrypt("whsec_test"),
    events: ["workflow.completed", "workflow.failed"],
    enabled: true,
    failureStreak: 0,
    createdAt: new Date(),
  });
  await push(store, tenant.id, "echo", "hello");
  const { slug, tags, ...definition } = workflowFileSchema.parse({
    slug: "single",
    steps: [{ id: "only", prompt: "echo" }],
  });
  await store.workflows.pushVersion({
    tenantId: tenant.id,
    slug,
    definition,
    contentHash: "h",
    tags,
    newWorkflowId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: new Date(),
  });
  return { store, events, engine, instance, one, two, tenant };
}

const completeStepRun = async (store: ReturnType<typeof createMemoryStore>, stepRunId: string) => {
  const usage = { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 };
  const block = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0, priced: true };
  await store.runs.complete(stepRunId, {
    output: "done",
    tokenUsage: usage,
    cost: { success: block, retries: block, total: 0, currency: "USD" },
    finishedAt: new Date(),
    memory: [],
    deliveries: [],
    steps: [],
  });
  return { usage, ended: (await store.runs.getById(stepRunId))! };
};

test("two instances advancing the same ended step at once: the workflow ends once, one webhook row", async () => {
  const { store, events, engine, one, two, tenant } = await setUp();
  const created = await one.service.create(tenant, "single", "latest", { inputs: {} });
  const seen: ThreadEvent[] = [];
  events.subscribe(tenant.id, created.thread, ({ event }) => seen.push(event));
  await waitFor(() => engine.enqueued.length === 1, "the step run enqueued");
  const { usage, ended } = await completeStepRun(store, engine.enqueued[0]!.run.id);
  one.onRunEnded(ended);
  two.onRunEnded(ended);
  await Promise.all([one.stop(), two.stop()]);

  expect(seen.filter((event) => event.type === "workflow.completed")).toHaveLength(1);
  const stepCompleted = seen.filter(
    (event) => event.type === "workflow.step" && event.data.status === "completed",
  );
  expect(stepCompleted).toHaveLength(1);
  const run = await one.service.get(tenant.id, created.id);
  expect(run).toMatchObject({ status: "completed", output: "done", tokenUsage: usage });
  const deliveries = await store.webhooks.dueDeliveries(new Date(Date.now() + 1000), 10);
  expect(deliveries.map((delivery) => [delivery.eventType, delivery.runId])).toEqual([
    ["workflow.completed", null],
  ]);
  const payload = webhookPayloadSchema.parse(
    JSON.parse((await store.webhooks.getEventPayload(deliveries[0]!.eventId!))!),
  );
  expect(payload).toMatchObject({
    type: "workflow.completed",
    data: { id: created.id, status: "completed" },
  });
});

test("start: a step that ended without its advance (a crash) is advanced; orphaned step runs are cancelled", async () => {
  const { store, engine, one, instance, tenant } = await setUp();
  const missed = await one.service.create(tenant, "single", "latest", { inputs: {} });
  const orphaned = await one.service.create(tenant, "single", "latest", { inputs: {} });
  await waitFor(() => engine.enqueued.length === 2, "both step runs enqueued");
  await one.stop();
  const stepRunOf = async (id: string) => (await store.workflows.getRunById(id))!.steps[0]!.runId!;
  await completeStepRun(store, await stepRunOf(missed.id));
  // The workflow run ended (a cancel) but the process died before cancelling its step run.
  const record = (await store.workflows.getRunById(orphaned.id))!;
  const end = { status: "failed" as const, output: null, outputJson: null, error: "cancelled" };
  await store.workflows.advance(orphaned.id, record.revision, {
    steps: record.steps,
    newRuns: [],
    end: { ...end, tokenUsage: null, cost: null, finishedAt: new Date(), deliveries: [] },
  });

  const restarted = instance();
  await restarted.start();
  await waitFor(
    async () => (await restarted.service.get(tenant.id, missed.id)).status === "completed",
    "advanced",
  );
  expect(engine.cancelled).toEqual([await stepRunOf(orphaned.id)]);
  await restarted.stop();
});
