/**
 * Shared set-up of the workflow run tests: a real Promptrun (engine, events, webhooks) over the
 * memory store, dev:echo prompts (priced, so costs add up), workflows pushed straight into the
 * store, and every event of the runs' threads recorded.
 */
import {
  type PromptFileInput,
  type ThreadEvent,
  type WorkflowFileInput,
  type WorkflowRun,
  workflowFileSchema,
} from "@promptrun/contract";
import {
  fakeChunk,
  fakeDetectMediaType,
  fakeExtract,
  fakeResolver,
} from "../../knowledge/knowledge-test-support.ts";
import type { RunRecord, Store, TenantRecord } from "../../ports.ts";
import { createPromptrun, type Promptrun } from "../../promptrun.ts";
import { createMemoryStore } from "../../testing/memory-store.ts";
import { createTestConfig } from "../../testing/test-config.ts";
import { waitFor } from "../../testing/wait-for.ts";

const textPrompt = (slug: string, extra: Partial<PromptFileInput> = {}): PromptFileInput => ({
  slug,
  model: "dev:echo",
  inputs: { text: { type: "string" } },
  messages: [{ role: "user", content: "{{text}}" }],
  ...extra,
});

export const lookupOrderTool = {
  type: "function",
  name: "lookup_order",
  description: "Look an order up.",
  parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
} as const;

/** echo: at once; slow: 15 ms a word; crawl: 150 ms a word; broken: a provider without credentials; ask: offers a client tool. */
export const TEST_PROMPTS: PromptFileInput[] = [
  textPrompt("echo"),
  textPrompt("slow", { params: { delayMs: 15 } }),
  textPrompt("crawl", { params: { delayMs: 150 } }),
  textPrompt("broken", { model: "openai:gpt-4o-mini" }),
  textPrompt("ask", { tools: [lookupOrderTool] }),
];

export const config = createTestConfig({
  allowPrivateUrls: true,
  priceOverrides: { "dev:echo": { inputPerMillion: 1_000, outputPerMillion: 2_000 } },
});

export interface WorkflowFixture {
  store: Store;
  promptrun: Promptrun;
  tenant: TenantRecord;
  events: Array<{ thread: string; event: ThreadEvent }>;
  pushWorkflow(file: WorkflowFileInput): Promise<void>;
  /** Creates a run on a thread of its own (watched) and returns its id and thread. */
  run(slug: string, inputs?: Record<string, unknown>): Promise<{ id: string; thread: string }>;
  get(id: string): Promise<WorkflowRun>;
  /** Until the run has ended. */
  ended(id: string): Promise<WorkflowRun>;
  stepRun(workflowRun: WorkflowRun, step: string): Promise<RunRecord>;
  eventTypes(thread: string): string[];
  stop(): Promise<void>;
}

export async function startWorkflowFixture(
  options: { store?: Store; tenant?: TenantRecord; maxPendingRunsPerTenant?: number } = {},
): Promise<WorkflowFixture> {
  const store = options.store ?? createMemoryStore();
  const promptrun = createPromptrun({
    store,
    config:
      options.maxPendingRunsPerTenant === undefined
        ? config
        : { ...config, maxPendingRunsPerTenant: options.maxPendingRunsPerTenant },
    knowledgeParts: {
      extract: fakeExtract,
      chunk: fakeChunk,
      resolveEmbeddingModel: fakeResolver(),
      detectMediaType: fakeDetectMediaType,
    },
    ingestion: { pollMs: 20 },
  });
  const { services } = promptrun;
  let tenant = options.tenant;
  if (!tenant) {
    const created = await services.tenants.create("Acme");
    tenant = (await store.tenants.get(created.tenant.id))!;
    await services.prompts.push(tenant.id, TEST_PROMPTS);
  }
  const owner = tenant;
  const events: WorkflowFixture["events"] = [];
  const watch = (thread: string) =>
    services.events.subscribe(owner.id, thread, ({ event }) => events.push({ thread, event }));
  await promptrun.start();

  const get = (id: string) => services.workflowRuns.get(owner.id, id);
  return {
    store,
    promptrun,
    tenant,
    events,
    async pushWorkflow(file) {
      const { slug, tags, ...definition } = workflowFileSchema.parse(file);
      await store.workflows.pushVersion({
        tenantId: owner.id,
        slug,
        definition,
        contentHash: JSON.stringify(definition),
        tags,
        newWorkflowId: Bun.randomUUIDv7(),
        newVersionId: Bun.randomUUIDv7(),
        at: new Date(),
      });
    },
    async run(slug, inputs = {}) {
      const thread = Bun.randomUUIDv7();
      watch(thread);
      const created = await services.workflowRuns.create(owner, slug, "latest", { inputs, thread });
      return { id: created.id, thread };
    },
    get,
    async ended(id) {
      await waitFor(async () => (await get(id)).status !== "pending", `workflow run ${id} to end`);
      return get(id);
    },
    async stepRun(workflowRun, step) {
      const runId = workflowRun.steps.find((candidate) => candidate.id === step)?.runId;
      if (!runId) throw new Error(`step ${step} has no run`);
      return (await store.runs.getById(runId))!;
    },
    eventTypes: (thread) =>
      events.filter((entry) => entry.thread === thread).map((entry) => entry.event.type),
    stop: () => promptrun.stop({ graceMs: 50 }),
  };
}
