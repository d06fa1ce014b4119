/** Helpers shared by this package's tests: temp databases and minimal valid rows. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NewRun, PromptVersionRecord } from "@promptrun/core";
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

// Tenants and prompts are written through the Store port alike in both dialects' tests.
export { addTenant, definitionOf, pushPrompt } from "../conformance/fixtures.ts";

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

/** Resolves on the next event-loop turn (after this turn's setImmediate callbacks). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
