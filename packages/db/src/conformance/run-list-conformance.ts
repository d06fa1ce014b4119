import { beforeEach, expect, test } from "bun:test";
import type { Cost } from "@promptrun/contract";
import type { NewRun, PromptVersionRecord, RunListFilter, TenantRecord } from "@promptrun/core";
import { addTenant, at, definitionOf, newRun, push, pushPrompt } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

const block = (total: number, priced?: boolean) => ({
  input: total,
  cachedInput: 0,
  output: 0,
  webSearch: 0,
  total,
  ...(priced === undefined ? {} : { priced }),
});
const costOf = (success: number, retries: number, priced?: boolean): Cost => ({
  success: block(success, priced),
  retries: block(retries),
  total: success + retries,
});
const usage = (input: number, output: number) => ({
  input,
  inputCached: 1,
  output,
  reasoning: 0,
  total: input + output,
});

/** The list filters of docs/PRODUCT-RULES.md "Listing runs" and the usage GROUP BY, on every store. */
export const runListConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let other: TenantRecord;
  let greet: PromptVersionRecord;
  let greet2: PromptVersionRecord;
  let summarize: PromptVersionRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    other = await addTenant(store(), "other");
    greet = await pushPrompt(store(), acme.id, "greet", "v1");
    greet2 = (await push(store(), acme.id, "greet", "v2")).version;
    summarize = (
      await push(store(), acme.id, "summarize", "s", [], 0, {
        ...definitionOf("s"),
        model: "openai:gpt-4o-mini",
      })
    ).version;
  });

  const create = async (version: PromptVersionRecord, overrides: Partial<NewRun>): Promise<NewRun> => {
    const run = newRun(version, overrides);
    await store().runs.create(run);
    return run;
  };
  const ids = async (filter: RunListFilter, tenantId = acme.id): Promise<string[]> =>
    (await store().runs.list(tenantId, filter, { limit: 50 })).items.map((run) => run.id);

  test("list filters: version, phase, environment, metadata, created range; combined with AND", async () => {
    const a = await create(greet, { createdAt: at(1), metadata: { customer: "acme", tags: ["vip", "eu"] } });
    const b = await create(greet2, {
      createdAt: at(2),
      environment: "staging",
      metadata: { customer: "zeta" },
    });
    const c = await create(summarize, { createdAt: at(3), metadata: { tags: ["eu"] } });
    await create(await pushPrompt(store(), other.id, "greet"), {
      createdAt: at(2),
      metadata: { customer: "acme" },
    });
    await store().runs.markStarted(b.id, at(5), 1);
    await store().runs.complete(c.id, {
      output: "ok",
      tokenUsage: usage(1, 1),
      cost: costOf(0, 0),
      finishedAt: at(6),
      memory: [],
      deliveries: [],
      steps: [],
    });

    expect(await ids({ slug: "greet", version: 1 })).toEqual([a.id]);
    expect(await ids({ slug: "greet", version: 2 })).toEqual([b.id]);
    expect(await ids({ phase: "queued" })).toEqual([a.id]);
    expect(await ids({ phase: "running" })).toEqual([b.id]);
    expect(await ids({ phase: "requires_action" })).toEqual([]);
    expect(await ids({ environment: "staging" })).toEqual([b.id]);
    expect(await ids({ metadata: { customer: "acme" } })).toEqual([a.id]);
    expect(await ids({ metadata: { tags: "eu" } })).toEqual([c.id, a.id]);
    expect(await ids({ metadata: { tags: "eu", customer: "acme" } })).toEqual([a.id]);
    // A part of an element is not the element; a missing key matches nothing.
    expect(await ids({ metadata: { tags: "v" } })).toEqual([]);
    expect(await ids({ metadata: { absent: "x" } })).toEqual([]);
    expect(await ids({ createdAfter: at(2) })).toEqual([c.id, b.id]);
    expect(await ids({ createdBefore: at(2) })).toEqual([a.id]);
    expect(await ids({ createdAfter: at(2), createdBefore: at(3), slug: "greet" })).toEqual([b.id]);
    expect(await ids({ status: "completed", metadata: { tags: "eu" } })).toEqual([c.id]);
    expect(await ids({ metadata: { customer: "acme" } }, other.id)).toHaveLength(1);
  });

  const end = async (
    run: NewRun,
    status: "completed" | "failed",
    cost: Cost | null,
    tokens = usage(10, 5),
  ) => {
    if (status === "completed") {
      await store().runs.complete(run.id, {
        output: "ok",
        tokenUsage: tokens,
        cost: cost ?? costOf(0, 0),
        finishedAt: at(99),
        memory: [],
        deliveries: [],
        steps: [],
      });
    } else {
      await store().runs.fail(run.id, { error: "boom", cost, finishedAt: at(99), deliveries: [] });
    }
  };

  test("usage groups ended runs in [from, to) by day, prompt, model and environment", async () => {
    const day = 86_400;
    const r1 = await create(greet, { createdAt: at(0) });
    const r2 = await create(summarize, { createdAt: at(10), environment: "staging" });
    const r3 = await create(greet2, { createdAt: at(day) });
    const pending = await create(greet, { createdAt: at(20) });
    const outside = await create(greet, { createdAt: at(3 * day) });
    await end(r1, "completed", costOf(0.25, 0.125));
    await end(r2, "failed", costOf(0.5, 0, false));
    await end(r3, "completed", costOf(1, 0), usage(7, 3));
    await end(outside, "completed", costOf(9, 9));
    const theirs = await create(await pushPrompt(store(), other.id, "greet"), { createdAt: at(0) });
    await end(theirs, "completed", costOf(5, 5));
    expect(pending.id).toBeDefined();

    const range = { from: at(0), to: at(2 * day) };
    const byPrompt = await store().runs.usage(acme.id, { ...range, groupBy: "prompt" });
    expect(byPrompt).toEqual([
      {
        key: "greet",
        runs: 2,
        completed: 2,
        failed: 0,
        tokenUsage: { input: 17, inputCached: 2, output: 8, reasoning: 0, total: 25 },
        cost: { success: 1.25, retries: 0.125, total: 1.375 },
        unpricedRuns: 0,
      },
      {
        key: "summarize",
        runs: 1,
        completed: 0,
        failed: 1,
        tokenUsage: { input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 },
        cost: { success: 0.5, retries: 0, total: 0.5 },
        unpricedRuns: 1,
      },
    ]);
    const keys = async (groupBy: "day" | "prompt" | "model" | "environment", extra = {}) =>
      (await store().runs.usage(acme.id, { ...range, groupBy, ...extra })).map((row) => [row.key, row.runs]);
    const firstDay = at(0).toISOString().slice(0, 10);
    const secondDay = at(day).toISOString().slice(0, 10);
    expect(await keys("day")).toEqual([
      [firstDay, 2],
      [secondDay, 1],
    ]);
    expect(await keys("model")).toEqual([
      ["dev:echo", 2],
      ["openai:gpt-4o-mini", 1],
    ]);
    expect(await keys("environment")).toEqual([
      ["production", 2],
      ["staging", 1],
    ]);
    expect(await keys("prompt", { environment: "staging" })).toEqual([["summarize", 1]]);
    expect(await keys("day", { slug: "greet" })).toEqual([
      [firstDay, 1],
      [secondDay, 1],
    ]);
    expect(await store().runs.usage(acme.id, { from: at(day + 1), to: at(2 * day), groupBy: "day" })).toEqual(
      [],
    );
  });
};
