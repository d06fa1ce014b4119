import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Cost } from "@promptrun/contract";
import type { PromptVersionRecord, RunCompletion, TenantRecord } from "@promptrun/core";
import { addTenant, newRun, pushPrompt } from "@promptrun/core/testing";
import type { SqliteStore } from "./open.ts";
import { openTempStore } from "./test-fixtures.ts";

// The dialect-neutral RunStore behaviour is in src/conformance/run-conformance.ts (run on SQLite
// and Postgres); what stays here is SQLite's own.

const at = (seconds: number) => new Date(1_700_000_000_000 + seconds * 1000);

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
const cost: Cost = { success: { ...zeroBlock, output: 0.5, total: 0.5 }, retries: zeroBlock, total: 0.5 };

const completion = (output: string): RunCompletion => ({
  output,
  tokenUsage: { input: 3, inputCached: 0, output: 2, reasoning: 0, total: 5 },
  cost,
  finishedAt: at(100),
  memory: [
    { role: "user", content: `question for ${output}` },
    { role: "assistant", content: output },
  ],
  deliveries: [],
  steps: [],
});

describe("SQLite RunStore", () => {
  let store: SqliteStore;
  let dispose: () => Promise<void>;
  let acme: TenantRecord;
  let version: PromptVersionRecord;

  beforeEach(async () => {
    ({ store, dispose } = await openTempStore());
    acme = await addTenant(store, "acme");
    version = await pushPrompt(store, acme.id, "greet");
  });
  afterEach(() => dispose());

  // The group commit applies writes in submission order, so the first ender is the winner.
  test("concurrent completions of one run: exactly one wins", async () => {
    const run = newRun(version);
    await store.runs.create(run);
    const outcomes = await Promise.all([
      store.runs.complete(run.id, completion("a")),
      store.runs.complete(run.id, completion("b")),
      store.runs.fail(run.id, { error: "c", cost: null, finishedAt: at(1), deliveries: [] }),
    ]);
    expect(outcomes).toEqual([true, false, false]);
    expect((await store.runs.memory(acme.id, run.threadId, "default")).messages).toHaveLength(2);
  });
});
