/**
 * Minimal valid rows, written through the Store port only: the store conformance suite, the
 * stores' own tests and the engine's unit tests build their records here.
 */
import type { PromptDefinition } from "@promptrun/contract";
import type {
  IdempotencyRecord,
  NewRun,
  PromptVersionRecord,
  RunRecord,
  Store,
  TenantRecord,
  WebhookDeliveryRecord,
  WebhookDeliveryState,
} from "../ports.ts";

/** A fixed instant plus `seconds`: tests never depend on the wall clock. */
export const at = (seconds: number): Date => new Date(1_700_000_000_000 + seconds * 1000);

export const definitionOf = (text: string): PromptDefinition => ({
  model: "dev:echo",
  params: {},
  inputs: {},
  messages: [{ role: "user", content: text }],
});

export const addTenant = async (
  store: Store,
  name = "acme",
  id = Bun.randomUUIDv7(),
): Promise<TenantRecord> => {
  const tenant: TenantRecord = {
    id,
    name,
    subscriptionActive: true,
    createdAt: at(0),
  };
  await store.tenants.create(tenant);
  return tenant;
};

export const push = (
  store: Store,
  tenantId: string,
  slug: string,
  text: string,
  tags: string[] = [],
  second = 0,
  definition: PromptDefinition = definitionOf(text),
) =>
  store.prompts.pushVersion({
    tenantId,
    slug,
    definition,
    contentHash: `hash-of-${text}`,
    tags,
    newPromptId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: at(second),
  });

export const pushPrompt = async (
  store: Store,
  tenantId: string,
  slug = "greet",
  text = "hello",
): Promise<PromptVersionRecord> => (await push(store, tenantId, slug, text)).version;

export const newRun = (version: PromptVersionRecord, overrides: Partial<NewRun> = {}): NewRun => ({
  id: Bun.randomUUIDv7(),
  tenantId: version.tenantId,
  threadId: Bun.randomUUIDv7(),
  channel: "default",
  promptId: version.promptId,
  promptVersionId: version.id,
  promptSlug: version.slug,
  promptVersion: version.version,
  priority: "normal",
  environment: "production",
  inputs: { name: "Ada" },
  metadata: {},
  encryptedEnvVars: null,
  createdAt: at(0),
  ...overrides,
});

export const idempotencyFor = (run: NewRun, key: string, createdAt = run.createdAt): IdempotencyRecord => ({
  tenantId: run.tenantId,
  key,
  requestHash: `request-${key}`,
  runId: run.id,
  threadId: run.threadId,
  createdAt,
});

/** A delivery as the store reads it back: its body lives in webhook_payloads. */
export const stateOf = ({ payload: _payload, ...state }: WebhookDeliveryRecord): WebhookDeliveryState =>
  state;

/**
 * Stores a run record as it stands, after the rows it refers to (its tenant, unless already
 * there, and its prompt version): for tests that start from a finished run.
 */
export const storeRunRecord = async (store: Store, run: RunRecord): Promise<void> => {
  if ((await store.tenants.get(run.tenantId)) === null) await addTenant(store, "tenant", run.tenantId);
  await store.prompts.pushVersion({
    tenantId: run.tenantId,
    slug: run.promptSlug,
    definition: definitionOf(run.promptVersionId),
    contentHash: `hash-of-${run.promptVersionId}`,
    tags: [],
    newPromptId: run.promptId,
    newVersionId: run.promptVersionId,
    at: run.createdAt,
  });
  await store.runs.create({
    id: run.id,
    tenantId: run.tenantId,
    threadId: run.threadId,
    channel: run.channel,
    promptId: run.promptId,
    promptVersionId: run.promptVersionId,
    promptSlug: run.promptSlug,
    promptVersion: run.promptVersion,
    priority: run.priority,
    environment: run.environment,
    inputs: run.inputs,
    metadata: run.metadata,
    encryptedEnvVars: null,
    createdAt: run.createdAt,
  });
};
