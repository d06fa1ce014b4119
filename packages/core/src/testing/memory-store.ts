import type { Store } from "../ports.ts";
import { createMemoryEnvironmentStore } from "./memory/environments.ts";
import { createMemoryPromptStore } from "./memory/prompts.ts";
import { createMemoryRunStore } from "./memory/runs.ts";
import { createMemoryTenantStore } from "./memory/tenants.ts";
import { createMemoryWebhookStore } from "./memory/webhooks.ts";

/**
 * The whole `Store` port in memory, with the semantics documented in ports.ts (CAS on
 * complete/fail, idempotency conflicts, keyset cursors, tenant scoping). For unit tests; the
 * SQLite store in @promptrun/db is the real one.
 */
export function createMemoryStore(): Store {
  const webhooks = createMemoryWebhookStore();
  const { insertDeliveries, ...webhookStore } = webhooks;
  return {
    tenants: createMemoryTenantStore(),
    prompts: createMemoryPromptStore(),
    runs: createMemoryRunStore(insertDeliveries),
    environments: createMemoryEnvironmentStore(),
    webhooks: webhookStore,
    async close() {},
  };
}
