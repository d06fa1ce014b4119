/**
 * The engine's bounded frontier (docs/ARCHITECTURE.md "Pending runs in memory") on each real
 * store: a stored backlog four times the memory budget, live creates and cancels meanwhile, a
 * channel whose onsite run waits behind its low runs. Every run is executed once, each channel in
 * creation order, and memory never holds more than its budget. Its other cases run on the memory
 * store: core/src/engine/pending-frontier.test.ts.
 */
import { expect } from "bun:test";
import type { Priority } from "@promptrun/contract";
import type { RunRecord, Store } from "@promptrun/core";
import { createEngineFixture, startFakeOpenAI } from "@promptrun/core/testing";
import { testOnEachStore } from "./test-each-store.ts";

/** The last message's text of a request the fake provider received. */
const messageOf = (body: unknown) => {
  const messages = (body as { messages?: Array<{ content: unknown }> }).messages ?? [];
  const content = messages.at(-1)?.content;
  return Array.isArray(content) ? String((content[0] as { text?: string }).text) : String(content);
};

const backlogThroughTheFrontier = async (store: Store) => {
  const openai = startFakeOpenAI(() => ({ type: "stream", tokens: ["ok"] }));
  const calls = () => openai.requests.map((request) => messageOf(request.body));
  const fixture = await createEngineFixture({
    store,
    config: {
      concurrency: 4,
      tenantConcurrency: 4,
      queueMemoryRuns: 64,
      providers: { openai: { apiKey: "sk-test", baseUrl: openai.baseUrl }, anthropic: {}, compatible: [] },
    },
  });
  const created: Array<{ run: RunRecord; message: string; channel: string }> = [];
  const create = async (
    message: string,
    thread: string,
    channel: string,
    priority: Priority,
    enqueue = true,
  ) => {
    const run = await fixture.createRun({ thread, channel, priority, inputs: { message }, enqueue });
    created.push({ run, message, channel: `${thread}/${channel}` });
  };
  try {
    const shared = Bun.randomUUIDv7();
    const threads = Array.from({ length: 20 }, () => Bun.randomUUIDv7());
    // Stored before the start, as after a restart: a channel's low runs, a deep normal backlog,
    // then an onsite run on that channel behind the low ones.
    for (let index = 0; index < 5; index++) await create(`low ${index}`, shared, "x", "low", false);
    for (let index = 0; index < 250; index++) {
      await create(`normal ${index}`, threads[index % 20]!, "a", "normal", false);
    }
    await create("onsite", shared, "x", "onsite", false);
    await fixture.engine.start();
    let mostInMemory = fixture.engine.stats().queuedInMemory;
    const cancelled = new Set<string>();
    for (let index = 0; index < 60; index++) {
      await create(`live ${index}`, threads[index % 20]!, "a", index % 7 === 0 ? "onsite" : "normal");
      mostInMemory = Math.max(mostInMemory, fixture.engine.stats().queuedInMemory);
      if (index % 12 === 0) {
        const victim = created[created.length - 40]!;
        const calledBefore = calls().includes(victim.message);
        if ((await fixture.engine.cancel(victim.run.id)) && !calledBefore) cancelled.add(victim.message);
      }
    }
    for (const { run } of created) await fixture.waitForEnd(run.id, 30_000);
    await fixture.waitForIdle();

    expect(mostInMemory).toBeLessThanOrEqual(64);
    const executed = created.filter(({ message }) => !cancelled.has(message)).map(({ message }) => message);
    expect(calls().sort()).toEqual(executed.sort());
    for (const channel of new Set(created.map((item) => item.channel))) {
      const inOrder = created
        .filter((item) => item.channel === channel && !cancelled.has(item.message))
        .map((item) => item.message);
      expect(calls().filter((message) => inOrder.includes(message))).toEqual(inOrder);
    }
    expect(fixture.engine.stats()).toEqual({
      queued: { onsite: 0, normal: 0, low: 0 },
      executing: 0,
      queuedInMemory: 0,
    });
  } finally {
    await fixture.close();
    await openai.close();
  }
};

await testOnEachStore(
  "a backlog four times the memory budget runs once each, channels in order",
  backlogThroughTheFrontier,
  60_000,
);
