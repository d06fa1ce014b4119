/** Helpers shared by this package's tests: temp databases and minimal valid rows. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PromptDefinition } from "@promptrun/contract";
import type { NewRun, PromptVersionRecord, TenantRecord } from "@promptrun/core";
import { openSqliteStore, type SqliteStore } from "./open.ts";

export interface TempDirectory {
  path: string;
  remove(): void;
}

export const createTempDirectory = (): TempDirectory => {
  const path = mkdtempSync(join(tmpdir(), "promptrun-db-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
};

/** A store on a fresh file in its own temp directory; `dispose` closes it and removes the files. */
export const openTempStore = async (
  options: Omit<Parameters<typeof openSqliteStore>[0], "url"> = {},
): Promise<{ store: SqliteStore; directory: TempDirectory; dispose(): Promise<void> }> => {
  const directory = createTempDirectory();
  const store = await openSqliteStore({ ...options, url: `file:${join(directory.path, "test.db")}` });
  return {
    store,
    directory,
    async dispose() {
      await store.close();
      directory.remove();
    },
  };
};

export const definitionOf = (text: string): PromptDefinition => ({
  model: "dev:echo",
  params: {},
  inputs: {},
  messages: [{ role: "user", content: text }],
});

export const addTenant = async (store: SqliteStore, name = "acme"): Promise<TenantRecord> => {
  const tenant: TenantRecord = {
    id: Bun.randomUUIDv7(),
    name,
    subscriptionActive: true,
    createdAt: new Date(1_700_000_000_000),
  };
  await store.tenants.create(tenant);
  return tenant;
};

export const pushPrompt = async (
  store: SqliteStore,
  tenantId: string,
  slug = "greet",
  text = "hello",
  tags: string[] = [],
): Promise<PromptVersionRecord> => {
  const result = await store.prompts.pushVersion({
    tenantId,
    slug,
    definition: definitionOf(text),
    contentHash: `hash-of-${text}`,
    tags,
    newPromptId: Bun.randomUUIDv7(),
    newVersionId: Bun.randomUUIDv7(),
    at: new Date(1_700_000_000_000),
  });
  return result.version;
};

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
  createdAt: new Date(),
  ...overrides,
});
