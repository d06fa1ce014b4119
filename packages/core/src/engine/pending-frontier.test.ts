import { afterEach, describe, expect, test } from "bun:test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { Priority } from "@promptrun/contract";
import { MockLanguageModelV4 } from "ai/test";
import type { RunRecord } from "../ports.ts";
import { createMemoryStore } from "../testing/memory-store.ts";
import { createEngineFixture, type EngineFixture, sentMessages } from "./engine-test-fixture.ts";

const fixtures: EngineFixture[] = [];
afterEach(async () => {
  for (const fixture of fixtures.splice(0)) await fixture.close();
});

const reply: LanguageModelV4StreamPart[] = [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "ok" },
  { type: "text-end", id: "t" },
  {
    type: "finish",
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    },
  },
];

const streamOf = (parts: LanguageModelV4StreamPart[]) =>
  new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });

/** A model that records each call's message in call order and holds every call until opened. */
function gatedModel() {
  const calls: string[] = [];
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      calls.push(sentMessages({ messages: options.prompt }).at(-1)?.content ?? "");
      await opened;
      return { stream: streamOf(reply) };
    },
  });
  return { model, calls, open };
}

/** An engine over `store` keeping at most 64 queued runs in memory, 16 per tenant and class. */
async function frontierEngine(model: MockLanguageModelV4, store = createMemoryStore(), capacity = 64) {
  const fixture = await createEngineFixture({
    store,
    config: { concurrency: 2, tenantConcurrency: 2, queueMemoryRuns: capacity },
    engine: { models: { resolve: async () => ({ model, provider: "mock", modelId: "m", secrets: [] }) } },
  });
  fixtures.push(fixture);
  return fixture;
}

const waitUntil = async (condition: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await Bun.sleep(2);
  }
};

const allEnded = async (fixture: EngineFixture, runs: RunRecord[]) => {
  for (const run of runs) expect((await fixture.waitForEnd(run.id)).status).toBe("completed");
};

describe("pending runs beyond the in-memory frontier", () => {
  test("a backlog deeper than memory runs each run once, oldest first, and the depth counts the stored runs", async () => {
    const { model, calls, open } = gatedModel();
    const fixture = await frontierEngine(model);
    await fixture.engine.start();
    const runs: RunRecord[] = [];
    for (let index = 0; index < 120; index++) {
      runs.push(await fixture.createRun({ inputs: { message: `run ${index}` } }));
    }
    await waitUntil(() => calls.length === 2);
    const stats = fixture.engine.stats();
    expect(stats.queued.normal).toBe(118);
    expect(stats.executing).toBe(2);
    expect(stats.queuedInMemory).toBe(16);

    open();
    await allEnded(fixture, runs);
    expect(calls).toEqual(runs.map((_, index) => `run ${index}`));
    expect(fixture.engine.stats()).toEqual({
      queued: { onsite: 0, normal: 0, low: 0 },
      executing: 0,
      queuedInMemory: 0,
    });
  });

  test("an onsite run created behind a deep normal backlog starts before the backlog", async () => {
    const { model, calls, open } = gatedModel();
    const fixture = await frontierEngine(model);
    await fixture.engine.start();
    const backlog: RunRecord[] = [];
    for (let index = 0; index < 60; index++) {
      backlog.push(await fixture.createRun({ inputs: { message: `normal ${index}` } }));
    }
    const urgent: RunRecord[] = [];
    for (let index = 0; index < 3; index++) {
      urgent.push(await fixture.createRun({ priority: "onsite", inputs: { message: `onsite ${index}` } }));
    }
    await waitUntil(() => calls.length === 2);
    // The onsite runs go through the store (their tenant overflows), then are paged in at once.
    await waitUntil(() => fixture.engine.stats().queuedInMemory >= 17);

    open();
    await allEnded(fixture, [...backlog, ...urgent]);
    // Two normal runs were executing; the onsite runs come next, then the rest of the backlog.
    expect(calls.slice(0, 5)).toEqual(["normal 0", "normal 1", "onsite 0", "onsite 1", "onsite 2"]);
    expect(calls.slice(5)).toEqual(backlog.slice(2).map((_, index) => `normal ${index + 2}`));
  });

  test("a channel keeps its order across classes when its earlier runs wait in the store", async () => {
    const { model, calls, open } = gatedModel();
    const fixture = await frontierEngine(model);
    await fixture.engine.start();
    const thread = Bun.randomUUIDv7();
    const runs: RunRecord[] = [];
    const create = async (message: string, priority: Priority, channel = "chat") =>
      runs.push(await fixture.createRun({ thread, channel, priority, inputs: { message } }));
    for (let index = 0; index < 40; index++) await create(`low ${index}`, "low", `side ${index}`);
    for (let index = 0; index < 5; index++) await create(`chat low ${index}`, "low");
    await create("chat onsite", "onsite");
    await create("other onsite", "onsite", "other");

    open();
    await allEnded(fixture, runs);
    const position = (message: string) => calls.indexOf(message);
    // The onsite run of another channel jumps the queue; the chat's onsite run waits for its channel.
    expect(position("other onsite")).toBeLessThan(position("low 10"));
    for (let index = 0; index < 5; index++) {
      expect(position(`chat low ${index}`)).toBeLessThan(position("chat onsite"));
    }
    expect(new Set(calls).size).toBe(runs.length);
    expect(calls).toHaveLength(runs.length);
  });

  test("a run cancelled while it waits in the store never executes, and leaves the depth", async () => {
    const { model, calls, open } = gatedModel();
    const fixture = await frontierEngine(model);
    await fixture.engine.start();
    const runs: RunRecord[] = [];
    for (let index = 0; index < 40; index++) {
      runs.push(await fixture.createRun({ inputs: { message: `run ${index}` } }));
    }
    await waitUntil(() => calls.length === 2);
    const stored = runs.at(-1)!;
    expect(await fixture.engine.cancel(stored.id)).toBe(true);
    expect(fixture.engine.stats().queued.normal).toBe(37);

    open();
    await allEnded(fixture, runs.slice(0, -1));
    expect((await fixture.store.runs.getById(stored.id))?.status).toBe("failed");
    expect(calls).not.toContain(`run ${runs.length - 1}`);
    expect(calls).toHaveLength(runs.length - 1);
    expect(fixture.engine.stats().queued.normal).toBe(0);
  });

  test("a restart pages a deep stored queue in: every run executes once, in order", async () => {
    const store = createMemoryStore();
    const first = gatedModel();
    const before = await frontierEngine(first.model, store);
    const runs: RunRecord[] = [];
    for (let index = 0; index < 80; index++) {
      runs.push(await before.createRun({ inputs: { message: `run ${index}` }, enqueue: false }));
    }
    await before.close();
    fixtures.splice(fixtures.indexOf(before), 1);

    const second = gatedModel();
    const after = await frontierEngine(second.model, store);
    await after.engine.start();
    expect(after.engine.stats().queuedInMemory).toBeLessThanOrEqual(16);
    expect(after.engine.stats().queued.normal + after.engine.stats().executing).toBe(80);
    second.open();
    await allEnded(after, runs);
    expect(first.calls).toEqual([]);
    expect(second.calls).toEqual(runs.map((_, index) => `run ${index}`));
  });
});

describe("the frontier under concurrent creates, cancels and stale pages", () => {
  test("every run executes once and each channel keeps its creation order", async () => {
    const store = createMemoryStore();
    // Pages answer late, as a database may: the runs they list may have ended meanwhile.
    const listPendingPage = store.runs.listPendingPage.bind(store.runs);
    store.runs.listPendingPage = async (...args) => {
      const rows = await listPendingPage(...args);
      await Bun.sleep(Math.random() * 8);
      return rows;
    };
    const calls: string[] = [];
    const model = new MockLanguageModelV4({
      doStream: async (options) => {
        calls.push(sentMessages({ messages: options.prompt }).at(-1)?.content ?? "");
        await Bun.sleep(Math.random() * 2);
        return { stream: streamOf(reply) };
      },
    });
    const fixture = await frontierEngine(model, store);
    await fixture.engine.start();
    const threads = Array.from({ length: 6 }, () => Bun.randomUUIDv7());
    const priorities: Priority[] = ["onsite", "normal", "low"];
    const created: Array<{ run: RunRecord; message: string; key: string }> = [];
    const cancelled = new Set<string>();
    for (let batch = 0; batch < 30; batch++) {
      // Ten creates at once, then maybe a cancel of a recent one.
      const made = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          const thread = threads[(batch + index) % threads.length]!;
          const channel = index % 2 === 0 ? "a" : "b";
          const message = `${batch}.${index}`;
          const priority = priorities[(batch * 7 + index) % 3]!;
          const run = await fixture.createRun({ thread, channel, priority, inputs: { message } });
          return { run, message, key: `${thread}/${channel}` };
        }),
      );
      created.push(...made);
      if (batch % 3 === 0) {
        // A run cancelled before its model call never gets one (one cancelled mid-call had it).
        const victim = created[Math.floor(Math.random() * created.length)]!;
        const calledBefore = calls.includes(victim.message);
        if ((await fixture.engine.cancel(victim.run.id)) && !calledBefore) cancelled.add(victim.message);
      }
      await Bun.sleep(Math.random() * 4);
    }
    for (const { run } of created) await fixture.waitForEnd(run.id, 20_000);

    const expected = created.filter(({ message }) => !cancelled.has(message));
    expect(calls.filter((message) => cancelled.has(message))).toEqual([]);
    expect([...calls].sort()).toEqual(expected.map(({ message }) => message).sort());
    // Per channel: executed in creation order (createdAt, then id, as the store orders them).
    const byChannel = new Map<string, string[]>();
    for (const item of [...expected].sort(
      (a, b) => a.run.createdAt.getTime() - b.run.createdAt.getTime() || (a.run.id < b.run.id ? -1 : 1),
    )) {
      byChannel.set(item.key, [...(byChannel.get(item.key) ?? []), item.message]);
    }
    for (const messages of byChannel.values()) {
      expect(calls.filter((message) => messages.includes(message))).toEqual(messages);
    }
  }, 30_000);
});
