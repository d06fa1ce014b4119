/**
 * RunStore.messagesBeforeRun (docs/PRODUCT-RULES.md "Run messages"): the history a run carried,
 * read back after the fact, on every store.
 */
import { beforeEach, expect, test } from "bun:test";
import type { MemoryPart } from "@promptrun/contract";
import type { NewRun, PromptVersionRecord, RunCompletion, TenantRecord } from "@promptrun/core";
import { addTenant, at, newRun, pushPrompt } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };

const completion = (output: string, memory?: RunCompletion["memory"]): RunCompletion => ({
  output,
  tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
  cost: { success: zeroBlock, retries: zeroBlock, total: 0 },
  finishedAt: at(100),
  memory: memory ?? [
    { role: "user", content: `q ${output}` },
    { role: "assistant", content: output },
  ],
  deliveries: [],
  steps: [],
});

export const runHistoryConformance = ({ store }: ConformanceContext): void => {
  let acme: TenantRecord;
  let version: PromptVersionRecord;
  let otherVersion: PromptVersionRecord;
  let thread: string;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    const other = await addTenant(store(), "other");
    version = await pushPrompt(store(), acme.id, "greet");
    otherVersion = await pushPrompt(store(), other.id, "greet");
    thread = Bun.randomUUIDv7();
  });

  /** A run of acme on the test's thread, created at `second` (channel order), stored. */
  const created = async (second: number, overrides: Partial<NewRun> = {}): Promise<NewRun> => {
    const run = newRun(version, { threadId: thread, channel: "a", createdAt: at(second), ...overrides });
    await store().runs.create(run);
    return run;
  };
  const completed = async (second: number, output: string, overrides: Partial<NewRun> = {}) => {
    const run = await created(second, overrides);
    expect(await store().runs.complete(run.id, completion(output))).toBe(true);
    return run;
  };
  const contents = async (run: NewRun, limit = 100) =>
    (await store().runs.messagesBeforeRun(run, limit)).map((message) => message.content);

  test("a completed run: the channel's messages before its exchange, newest `limit`, oldest first", async () => {
    const one = await completed(1, "one");
    await completed(2, "side", { channel: "b" });
    const two = await completed(3, "two");
    const three = await completed(4, "three");
    // Another tenant's run on the same thread id and channel is never history.
    const foreign = newRun(otherVersion, { threadId: thread, channel: "a", createdAt: at(2) });
    await store().runs.create(foreign);
    await store().runs.complete(foreign.id, completion("foreign"));

    expect(await contents(one)).toEqual([]);
    expect(await contents(two)).toEqual(["q one", "one"]);
    expect(await contents(three)).toEqual(["q one", "one", "q two", "two"]);
    expect(await contents(three, 3)).toEqual(["one", "q two", "two"]);
    expect(await contents(three, 1)).toEqual(["two"]);
    expect(await contents(three, 0)).toEqual([]);
    expect(await store().runs.messagesBeforeRun(two, 5)).toEqual([
      { role: "user", content: "q one" },
      { role: "assistant", content: "one" },
    ]);
  });

  test("imported messages are history like any other, before and between exchanges", async () => {
    await store().runs.importMessages(acme.id, thread, "a", [{ role: "user", content: "imported 1" }], at(0));
    const one = await completed(1, "one");
    await store().runs.importMessages(acme.id, thread, "a", [{ role: "user", content: "imported 2" }], at(5));
    const two = await completed(2, "two");
    expect(await contents(one)).toEqual(["imported 1"]);
    expect(await contents(two)).toEqual(["imported 1", "q one", "one", "imported 2"]);
  });

  test("a run that wrote nothing (failed, or still pending): before the first exchange of a later run", async () => {
    const one = await completed(1, "one");
    const failed = await created(2);
    expect(
      await store().runs.fail(failed.id, { error: "no", cost: null, finishedAt: at(50), deliveries: [] }),
    ).toBe(true);
    const pending = await created(3);
    // No later run has written yet: the channel's newest messages.
    expect(await contents(failed)).toEqual(["q one", "one"]);
    expect(await contents(pending)).toEqual(["q one", "one"]);

    await store().runs.complete(pending.id, completion("three"));
    expect(await contents(failed)).toEqual(["q one", "one"]);
    expect(await contents(pending)).toEqual(["q one", "one"]);
    expect(await contents(one)).toEqual([]);
  });

  test("channel order is createdAt, then id: a run created in the same instant after another follows it", async () => {
    const [firstId, secondId] = [Bun.randomUUIDv7(), Bun.randomUUIDv7()].sort();
    const first = await completed(1, "first", { id: firstId });
    const second = await completed(1, "second", { id: secondId });
    expect(await contents(first)).toEqual([]);
    expect(await contents(second)).toEqual(["q first", "first"]);
  });

  test("parts come back as stored; an unknown thread or channel has no history", async () => {
    const parts: MemoryPart[] = [
      { type: "text", text: "what is this?" },
      { type: "image", image: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png" },
    ];
    const exchange: RunCompletion["memory"] = [
      { role: "user", content: "what is this?", parts },
      {
        role: "assistant",
        content: "",
        parts: [{ type: "tool-call", toolCallId: "c1", name: "look", arguments: {} }],
      },
      {
        role: "tool",
        content: "",
        parts: [
          { type: "tool-result", toolCallId: "c1", name: "look", output: { cat: true }, isError: false },
        ],
      },
      { role: "assistant", content: "a cat" },
    ];
    const one = await created(1);
    await store().runs.complete(one.id, completion("a cat", exchange));
    const two = await created(2);
    expect(await store().runs.messagesBeforeRun(two, 10)).toEqual(exchange);
    expect(await store().runs.messagesBeforeRun({ ...two, channel: "elsewhere" }, 10)).toEqual([]);
    expect(await store().runs.messagesBeforeRun({ ...two, threadId: Bun.randomUUIDv7() }, 10)).toEqual([]);
  });

  test("a long channel: the window right before the run, in order", async () => {
    const runs: NewRun[] = [];
    for (let index = 0; index < 60; index++) runs.push(await completed(index, `e${index}`));
    const expected = (end: number, limit: number) =>
      Array.from({ length: end }, (_, index) => [`q e${index}`, `e${index}`])
        .flat()
        .slice(-limit);
    expect(await contents(runs[30]!, 20)).toEqual(expected(30, 20));
    expect(await contents(runs[59]!, 7)).toEqual(expected(59, 7));
    expect(await contents(runs[5]!, 1_000)).toEqual(expected(5, 1_000));
  });
};
