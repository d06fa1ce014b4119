import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunRecord, Store } from "@promptrun/core";
import { at } from "@promptrun/core/testing";
import { type Column, getTableColumns, type Table } from "drizzle-orm";

/** A run as the schema before the run_steps migration stored it: no steps, no pause (nor later columns). */
export type LegacyRun = Omit<RunRecord, "steps" | "pause" | "retrieval" | "citations">;

/** The columns the run_steps migration added (property names of the drizzle schema). */
const ADDED = new Set(["steps", "requiredAction", "pausedStep", "pauseExpiresAt"]);

/**
 * A legacy run's columns and driver values for a hand-written INSERT into `runs` of `table`'s
 * dialect (drizzle's own encodings: epoch ms or timestamptz text, JSON text).
 */
export const legacyRunRow = (table: Table, run: LegacyRun): { names: string[]; values: unknown[] } => {
  const columns = Object.entries(getTableColumns(table)).filter(([key]) => !ADDED.has(key) && key in run) as [
    keyof LegacyRun,
    Column,
  ][];
  return {
    names: columns.map(([, column]) => column.name),
    values: columns.map(([key, column]) => (run[key] === null ? null : column.mapToDriverValue(run[key]))),
  };
};

/** One dialect's fresh database, seen through what the migration test needs. */
export interface MigratingStoreDatabase {
  /** Applies the migrations of `folder` (drizzle's migrator). */
  migrate(folder: string): Promise<void>;
  /** Inserts runs as rows of the schema before the migration, their references unchecked. */
  insertLegacyRuns(runs: LegacyRun[]): Promise<void>;
  /** Opens the store on the database (which applies the remaining migrations). */
  openStore(): Promise<Store>;
  close(): Promise<void>;
}

export interface RunStepsMigrationDialect {
  migrationsFolder: string;
  /** The run_steps migration's tag in the dialect's journal. */
  tag: string;
  /** False when the database is not reachable: the test is skipped (its helper said why). */
  available: boolean;
  open(): Promise<MigratingStoreDatabase>;
}

const legacyRun = (overrides: Partial<LegacyRun>): LegacyRun => ({
  id: Bun.randomUUIDv7(),
  tenantId: Bun.randomUUIDv7(),
  threadId: Bun.randomUUIDv7(),
  channel: "default",
  promptId: Bun.randomUUIDv7(),
  promptVersionId: Bun.randomUUIDv7(),
  promptSlug: "greet",
  promptVersion: 1,
  priority: "normal",
  environment: "production",
  status: "pending",
  inputs: { name: "Ada" },
  metadata: { customer: "42" },
  encryptedEnvVars: null,
  createdAt: at(1),
  startedAt: null,
  finishedAt: null,
  output: null,
  error: null,
  tokenUsage: null,
  cost: null,
  attempts: 0,
  outputJson: null,
  finishReason: null,
  memoryWindow: null,
  ...overrides,
});

/**
 * The run_steps migration, run by each dialect's test: runs written before it read back with no
 * steps and no pause, stay claimable, and can pause afterwards.
 */
export const testRunStepsMigration = ({
  migrationsFolder,
  tag,
  available,
  open,
}: RunStepsMigrationDialect) => {
  const temporary: string[] = [];
  afterAll(() => {
    for (const path of temporary.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  /** The committed migrations up to (not including) `tag`, as their own folder. */
  const migrationsBefore = (): string => {
    const folder = mkdtempSync(join(tmpdir(), "promptrun-migrations-"));
    temporary.push(folder);
    cpSync(migrationsFolder, folder, { recursive: true });
    const journalPath = join(folder, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
    const index = journal.entries.findIndex((entry) => entry.tag === tag);
    expect(index).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, index);
    writeFileSync(journalPath, JSON.stringify(journal));
    return folder;
  };

  test.skipIf(!available)(`${tag}: existing runs read back with no steps and no pause`, async () => {
    const database = await open();
    try {
      await database.migrate(migrationsBefore());
      const pending = legacyRun({ startedAt: at(2), attempts: 1 });
      const completed = legacyRun({
        status: "completed",
        createdAt: at(0),
        startedAt: at(1),
        finishedAt: at(3),
        output: "Hello Ada",
        tokenUsage: { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 },
        finishReason: "stop",
        attempts: 1,
      });
      await database.insertLegacyRuns([pending, completed]);
      const store = await database.openStore();

      expect(await store.runs.getById(pending.id)).toEqual({
        ...pending,
        steps: [],
        pause: null,
        retrieval: [],
        citations: [],
      });
      expect(await store.runs.getById(completed.id)).toEqual({
        ...completed,
        steps: [],
        pause: null,
        retrieval: [],
        citations: [],
      });
      expect(await store.runs.listPending()).toEqual([
        { ...pending, steps: [], pause: null, retrieval: [], citations: [] },
      ]);
      expect((await store.runs.listClaimable(at(10), 10)).map((run) => run.id)).toEqual([pending.id]);
      expect(await store.runs.listExpiredPauses(at(10_000), 10)).toEqual([]);

      const pause = {
        step: 0,
        requiredAction: {
          type: "submit_tool_outputs" as const,
          toolCalls: [{ id: "call_1", name: "approve", arguments: {} }],
          expiresAt: at(600).toISOString(),
        },
        expiresAt: at(600),
      };
      expect(await store.runs.pause(pending.id, { steps: [], pause, deliveries: [] })).toBe(true);
      expect((await store.runs.getById(pending.id))?.pause).toEqual(pause);
    } finally {
      await database.close();
    }
  });
};
