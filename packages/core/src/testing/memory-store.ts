import { PromptrunError } from "../errors.ts";
import type { Clock, Store } from "../ports.ts";
import { createMemoryConsoleSessionStore } from "./memory/console-sessions.ts";
import { createMemoryEnvironmentStore } from "./memory/environments.ts";
import { createMemoryKnowledgeStore } from "./memory/knowledge.ts";
import { createMemoryPromptStore } from "./memory/prompts.ts";
import type { MemoryReferences } from "./memory/references.ts";
import { createMemoryRunStore } from "./memory/runs.ts";
import { createMemoryTenantStore } from "./memory/tenants.ts";
import { createMemoryWebhookStore } from "./memory/webhooks.ts";
import { createMemoryWorkflowStore } from "./memory/workflows.ts";

export interface MemoryStoreOptions {
  /** Where "now" comes from when the store itself stamps a time (an API key's last use). */
  clock?: Clock;
}

/** The memory store, plus a look at what it keeps at rest that the port does not show. */
export type MemoryStore = Store & {
  /** The webhook's encrypted secret as stored, deleted rows included (null: no such row). */
  storedWebhookSecret(id: string): string | null;
};

/** The port's methods only: the parts' helpers for each other stay inside the memory store. */
const withoutHelpers = <T extends object, K extends keyof T>(part: T, ...helpers: K[]): Omit<T, K> => {
  const port = { ...part };
  for (const helper of helpers) delete port[helper];
  return port;
};

/**
 * The whole `Store` port in memory, with the semantics documented in ports.ts (CAS on
 * complete/fail, idempotency conflicts, keyset cursors, tenant scoping); it passes the store
 * conformance suite in @promptrun/db. For unit tests; the SQL stores in @promptrun/db are the real ones.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const clock = options.clock ?? { now: () => new Date() };
  // The parts check each other's rows where the SQL stores have foreign keys.
  const references: MemoryReferences = {
    tenant: (id) => tenants.has(id),
    promptVersion: (id) => prompts.hasVersion(id),
    promptModel: (id) => prompts.modelOf(id),
    environment: (id) => environments.has(id),
    run: (id) => runs.has(id),
  };
  const tenants = createMemoryTenantStore(clock);
  const environments = createMemoryEnvironmentStore(references);
  const webhooks = createMemoryWebhookStore(references);
  const prompts = createMemoryPromptStore(references, {
    check: webhooks.checkDeliveries,
    insert: webhooks.insertDeliveries,
  });
  const runs = createMemoryRunStore(references, webhooks.insertDeliveries);
  const workflows = createMemoryWorkflowStore(references, runs, {
    check: webhooks.checkDeliveries,
    insert: webhooks.insertDeliveries,
  });
  const consoleSessions = createMemoryConsoleSessionStore(tenants.keyWithTenant, tenants.has);
  const knowledge = createMemoryKnowledgeStore(references, {
    check: webhooks.checkDeliveries,
    insert: webhooks.insertDeliveries,
  });
  let closed = false;
  // Like a closed database handle: every call after close is refused as unavailable.
  const guard = <T extends object>(part: T): T => {
    const guarded = {} as Record<string, unknown>;
    for (const [name, value] of Object.entries(part)) {
      guarded[name] =
        typeof value === "function"
          ? (...args: unknown[]) => {
              if (closed) return Promise.reject(new PromptrunError("unavailable", "the store is closed"));
              return value(...args);
            }
          : value;
    }
    return guarded as T;
  };
  return {
    tenants: guard(withoutHelpers(tenants, "has", "keyWithTenant")),
    prompts: guard(withoutHelpers(prompts, "hasVersion", "modelOf")),
    runs: guard(withoutHelpers(runs, "has", "checkInsert", "insert", "ensureThread", "pendingStepRuns")),
    environments: guard(withoutHelpers(environments, "has")),
    webhooks: guard(withoutHelpers(webhooks, "insertDeliveries", "checkDeliveries", "storedSecret")),
    consoleSessions: guard(consoleSessions),
    knowledge: guard(knowledge),
    workflows: guard(workflows),
    storedWebhookSecret: webhooks.storedSecret,
    async close() {
      closed = true;
    },
  };
}
