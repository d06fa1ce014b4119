/**
 * A run's `retrieval` and `citations` (docs/KNOWLEDGE.md "In prompts"): [] at create (column
 * defaults), written by saveSteps, pause, complete and fail as RunStore documents.
 */
import { beforeEach, expect, test } from "bun:test";
import type { Citation, Cost, RunRetrieval } from "@promptrun/contract";
import type { PromptVersionRecord, RunCompletion, TenantRecord } from "@promptrun/core";
import { addTenant, at, newRun, pushPrompt } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
const cost: Cost = { success: zeroBlock, retries: zeroBlock, total: 0 };
const usage = { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 };

const search = (query: string): RunRetrieval => ({
  knowledgeBase: "docs",
  query,
  chunks: [
    {
      n: 1,
      chunkId: Bun.randomUUIDv7(),
      documentId: Bun.randomUUIDv7(),
      filename: "a «b».pdf",
      score: 0.031,
    },
  ],
});

const citationOf = (retrieval: RunRetrieval): Citation => {
  const chunk = retrieval.chunks[0]!;
  return {
    n: 1,
    chunkId: chunk.chunkId,
    documentId: chunk.documentId,
    filename: chunk.filename,
    quote: "The start",
  };
};

const completion = (overrides: Partial<RunCompletion> = {}): RunCompletion => ({
  output: "answer [1]",
  tokenUsage: usage,
  cost,
  finishedAt: at(100),
  memory: [],
  deliveries: [],
  steps: [],
  ...overrides,
});

export const runRetrievalConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let version: PromptVersionRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    version = await pushPrompt(store(), acme.id, "rag");
  });
  const created = async () => {
    const run = newRun(version);
    await store().runs.create(run);
    return run;
  };

  test("a new run has no retrieval and no citations", async () => {
    const run = await created();
    expect(await store().runs.get(acme.id, run.id)).toMatchObject({ retrieval: [], citations: [] });
  });

  test("saveSteps stores the retrieval when given and keeps it when not", async () => {
    const run = await created();
    const first = search("what is the refund policy?");
    expect(await store().runs.saveSteps(run.id, [], [first])).toBe(true);
    expect((await store().runs.getById(run.id))?.retrieval).toEqual([first]);
    expect(await store().runs.saveSteps(run.id, [])).toBe(true);
    expect((await store().runs.getById(run.id))?.retrieval).toEqual([first]);
  });

  test("complete replaces the retrieval when given, keeps it when not, and stores the citations", async () => {
    const kept = await created();
    const first = search("first");
    await store().runs.saveSteps(kept.id, [], [first]);
    expect(await store().runs.complete(kept.id, completion({ citations: [citationOf(first)] }))).toBe(true);
    expect(await store().runs.getById(kept.id)).toMatchObject({
      retrieval: [first],
      citations: [citationOf(first)],
    });

    const replaced = await created();
    const second = search("second");
    await store().runs.saveSteps(replaced.id, [], [first]);
    expect(await store().runs.complete(replaced.id, completion({ retrieval: [first, second] }))).toBe(true);
    expect(await store().runs.getById(replaced.id)).toMatchObject({
      retrieval: [first, second],
      citations: [],
    });
  });

  test("fail and pause store the retrieval when given and keep it when not", async () => {
    const failing = await created();
    const first = search("first");
    await store().runs.saveSteps(failing.id, [], [first]);
    expect(
      await store().runs.fail(failing.id, { error: "boom", cost: null, finishedAt: at(9), deliveries: [] }),
    ).toBe(true);
    expect((await store().runs.getById(failing.id))?.retrieval).toEqual([first]);

    const failingWith = await created();
    const second = search("second");
    await store().runs.fail(failingWith.id, {
      error: "boom",
      cost: null,
      finishedAt: at(9),
      deliveries: [],
      retrieval: [second],
    });
    expect((await store().runs.getById(failingWith.id))?.retrieval).toEqual([second]);

    const pausing = await created();
    const pause = {
      step: 0,
      requiredAction: {
        type: "submit_tool_outputs" as const,
        toolCalls: [],
        expiresAt: at(600).toISOString(),
      },
      expiresAt: at(600),
    };
    expect(
      await store().runs.pause(pausing.id, { steps: [], pause, deliveries: [], retrieval: [second] }),
    ).toBe(true);
    expect((await store().runs.getById(pausing.id))?.retrieval).toEqual([second]);
  });
};
