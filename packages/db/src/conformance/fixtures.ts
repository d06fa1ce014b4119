/** Minimal valid rows for the store conformance suite, written through the Store port only. */
import type { PromptDefinition } from "@promptrun/contract";
import type {
  Clock,
  IdempotencyRecord,
  NewRun,
  PromptVersionRecord,
  Store,
  TenantRecord,
  WebhookDeliveryRecord,
  WebhookDeliveryState,
} from "@promptrun/core";

/** A fixed instant plus `seconds`: tests never depend on the wall clock. */
export const at = (seconds: number): Date => new Date(1_700_000_000_000 + seconds * 1000);

export class ManualClock implements Clock {
  constructor(public current: Date) {}
  now = (): Date => this.current;
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export const definitionOf = (text: string): PromptDefinition => ({
  model: "dev:echo",
  params: {},
  inputs: {},
  messages: [{ role: "user", content: text }],
});

export const addTenant = async (store: Store, name = "acme"): Promise<TenantRecord> => {
  const tenant: TenantRecord = {
    id: Bun.randomUUIDv7(),
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
