/**
 * Several engines on one store (the memory store; the SQL stores pass the same lease conformance
 * suite): leases, strict channel order, the per-tenant limit across instances, take-over of a
 * dead instance's runs, and cancels that reach the instance executing the run.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Priority } from "@promptrun/contract";
import { createInMemoryThreadEventBus } from "../events/in-memory-thread-event-bus.ts";
import type { ClusterSignals, DeliveredThreadEvent, RunRecord, Store } from "../ports.ts";
import { createSecretBox } from "../security/secret-box.ts";
import { createMemoryStore } from "../testing/memory-store.ts";
import { createTestConfig, TEST_SECRET } from "../testing/test-config.ts";
import { createEngine } from "./engine.ts";

const clock = { now: () => new Date() };
const TENANTS = ["tenant-a", "tenant-b"];

/** In-process stand-in for the Redis signals: every instance hears every announcement. */
const createSharedSignals = () => {
  const listeners = new Set<{ onWork(): void; onCancel(runId: string): void }>();
  const signals: ClusterSignals = {
    announceWork: () =>
      queueMicrotask(() => {
        for (const listener of listeners) listener.onWork();
      }),
    announceCancel: (runId) =>
      queueMicrotask(() => {
        for (const listener of listeners) listener.onCancel(runId);
      }),
    listen(handlers) {
      listeners.add(handlers);
      return () => listeners.delete(handlers);
    },
  };
  return signals;
};

interface ClusterOptions {
  instances: number;
  concurrency?: number;
  tenantConcurrency?: number;
  leaseMs?: number;
  signals?: boolean;
  /** dev:echo pause between words. */
  delayMs?: number;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function createCluster(options: ClusterOptions) {
  const store: Store = createMemoryStore();
  const events = createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock });
  const secrets = createSecretBox(TEST_SECRET);
  const config = createTestConfig({
    concurrency: options.concurrency ?? 4,
    tenantConcurrency: options.tenantConcurrency ?? 8,
  });
  const at = new Date();
  const versions = new Map<string, Awaited<ReturnType<Store["prompts"]["pushVersion"]>>["version"]>();
  for (const tenantId of TENANTS) {
    await store.tenants.create({ id: tenantId, name: tenantId, subscriptionActive: true, createdAt: at });
    await store.environments.ensure(tenantId, "production", Bun.randomUUIDv7(), at);
    const definition = {
      model: "dev:echo",
      params: { delayMs: options.delayMs ?? 2 },
      inputs: { message: { type: "string" as const } },
      messages: [{ role: "user" as const, content: "{{message}}" }],
    };
    const { version } = await store.prompts.pushVersion({
      tenantId,
      slug: "echo",
      definition,
      contentHash: "echo",
      tags: [],
      newPromptId: Bun.randomUUIDv7(),
      newVersionId: Bun.randomUUIDv7(),
      at,
    });
    versions.set(tenantId, version);
  }
  const signals = options.signals === false ? undefined : createSharedSignals();
  const startEngine = (owner: string) =>
    createEngine({
      store,
      config,
      clock,
      events,
      secrets,
      cluster: {
        owner,
        leaseMs: options.leaseMs ?? 2_000,
        pollEveryMs: 20,
        renewEveryMs: Math.max(50, Math.floor((options.leaseMs ?? 2_000) / 4)),
        ...(signals ? { signals } : {}),
      },
    });
  const engines = Array.from({ length: options.instances }, (_, index) => startEngine(`instance-${index}`));
  await Promise.all(engines.map((engine) => engine.start()));

  /** Every event of every thread, in publish order, with its thread. */
  const log: Array<DeliveredThreadEvent & { thread: string }> = [];
  const watched = new Set<string>();
  const unsubscribers: Array<() => void> = [];

  const createRun = async (input: {
    tenantId?: string;
    thread?: string;
    channel?: string;
    priority?: Priority;
    message?: string;
    /** The engine told about it (as the instance that took the request); none: only polling finds it. */
    via?: number;
  }): Promise<RunRecord> => {
    const tenantId = input.tenantId ?? TENANTS[0]!;
    const version = versions.get(tenantId)!;
    const thread = input.thread ?? Bun.randomUUIDv7();
    const key = `${tenantId}/${thread}`;
    if (!watched.has(key)) {
      watched.add(key);
      unsubscribers.push(
        events.subscribe(tenantId, thread, (event) => log.push({ ...event, thread })).unsubscribe,
      );
    }
    await store.runs.create({
      id: Bun.randomUUIDv7(),
      tenantId,
      threadId: thread,
      channel: input.channel ?? "default",
      promptId: version.promptId,
      promptVersionId: version.id,
      promptSlug: version.slug,
      promptVersion: version.version,
      priority: input.priority ?? "normal",
      environment: "production",
      inputs: { message: input.message ?? "one two three four" },
      metadata: {},
      encryptedEnvVars: null,
      createdAt: new Date(),
    });
    const created = (await store.runs.list(tenantId, { threadId: thread }, { limit: 1 })).items[0]!;
    if (input.via !== undefined) engines[input.via]!.enqueue(created);
    return created;
  };

  const waitForEnd = async (runId: string, timeoutMs = 15_000): Promise<RunRecord> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await store.runs.getById(runId);
      if (run && run.status !== "pending") return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} still pending after ${timeoutMs} ms`);
      await Bun.sleep(5);
    }
  };

  const eventsOf = (runId: string) =>
    log.filter((delivered) => "runId" in delivered.event.data && delivered.event.data.runId === runId);

  const cluster = {
    store,
    engines,
    log,
    createRun,
    waitForEnd,
    eventsOf,
    startEngine,
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      await Promise.all(engines.map((engine) => engine.stop({ graceMs: 0 })));
      await events.close();
    },
  };
  cleanups.push(() => cluster.close());
  return cluster;
}

/** Most runs of `tenantId` between their run.started and their end at any point of the log. */
const peakConcurrency = (
  log: Array<DeliveredThreadEvent & { thread: string }>,
  runsOfTenant: Set<string>,
): number => {
  const executing = new Set<string>();
  let peak = 0;
  for (const { event } of log) {
    if (!("runId" in event.data) || event.data.runId === null || !runsOfTenant.has(event.data.runId))
      continue;
    if (event.type === "run.started") executing.add(event.data.runId);
    if (event.type === "run.completed" || event.type === "run.failed") executing.delete(event.data.runId);
    peak = Math.max(peak, executing.size);
  }
  return peak;
};

describe("engines sharing a store", () => {
  test("every run completes exactly once, each channel in creation order, with its memory", async () => {
    const cluster = await createCluster({ instances: 3, concurrency: 2, delayMs: 3 });
    const threads = Array.from({ length: 4 }, () => Bun.randomUUIDv7());
    const runs: RunRecord[] = [];
    for (let index = 0; index < 24; index++) {
      runs.push(
        await cluster.createRun({
          thread: threads[index % threads.length],
          channel: index % 8 < 4 ? "default" : "side",
          message: `message number ${index}`,
          // A third told to an instance, the rest found by polling.
          ...(index % 3 === 0 ? { via: index % 3 } : {}),
        }),
      );
    }
    const ended = await Promise.all(runs.map((run) => cluster.waitForEnd(run.id)));
    expect(ended.map((run) => run.status)).toEqual(runs.map(() => "completed"));
    expect(ended.map((run) => run.output)).toEqual(runs.map((_, index) => `message number ${index}`));

    for (const run of runs) {
      const types = cluster.eventsOf(run.id).map((delivered) => delivered.event.type);
      // One start, one end: no instance executed it twice.
      expect(types.filter((type) => type === "run.started")).toHaveLength(1);
      expect(types.filter((type) => type === "run.completed")).toHaveLength(1);
    }
    // Strict order per channel: each run starts after the previous run of its channel ended.
    const position = new Map(cluster.log.map((delivered, index) => [delivered, index]));
    const indexOf = (runId: string, type: string) =>
      position.get(cluster.eventsOf(runId).find((delivered) => delivered.event.type === type)!)!;
    for (const thread of threads) {
      for (const channel of ["default", "side"]) {
        const ofChannel = runs.filter((run) => run.threadId === thread && run.channel === channel);
        for (let index = 1; index < ofChannel.length; index++) {
          expect(indexOf(ofChannel[index]!.id, "run.started")).toBeGreaterThan(
            indexOf(ofChannel[index - 1]!.id, "run.completed"),
          );
        }
        // Memory: each run saw the earlier exchanges of its channel.
        const { messages: memory } = await cluster.store.runs.memory("tenant-a", thread, channel);
        expect(
          memory.filter((message) => message.role === "assistant").map((message) => message.content),
        ).toEqual(ofChannel.map((run) => `message number ${runs.indexOf(run)}`));
      }
    }
  });

  test("the per-tenant limit holds across instances; other tenants are not held back", async () => {
    const cluster = await createCluster({ instances: 3, concurrency: 4, tenantConcurrency: 2, delayMs: 10 });
    const runsOfA = await Promise.all(
      Array.from({ length: 12 }, (_, index) => cluster.createRun({ via: index % 3, tenantId: "tenant-a" })),
    );
    const runsOfB = await Promise.all(
      Array.from({ length: 4 }, () => cluster.createRun({ tenantId: "tenant-b" })),
    );
    await Promise.all([...runsOfA, ...runsOfB].map((run) => cluster.waitForEnd(run.id)));
    expect(peakConcurrency(cluster.log, new Set(runsOfA.map((run) => run.id)))).toBe(2);
    expect(peakConcurrency(cluster.log, new Set(runsOfB.map((run) => run.id)))).toBe(2);
  });

  test("a dead instance's run is taken over when its lease lapses, its attempts carried on", async () => {
    const cluster = await createCluster({ instances: 1, leaseMs: 300 });
    const run = await cluster.createRun({});
    // As if an instance claimed and started it, then died: its lease runs out 300 ms later.
    const now = new Date();
    expect(await cluster.store.runs.claim(run.id, "dead", new Date(now.getTime() + 300), now)).toBe(true);
    await cluster.store.runs.markStarted(run.id, now, 1);
    const ended = await cluster.waitForEnd(run.id);
    expect(ended.status).toBe("completed");
    expect(ended.attempts).toBe(2);
    expect(ended.finishedAt!.getTime() - now.getTime()).toBeGreaterThanOrEqual(300);
  });

  test("stop() gives leases back at once: another instance finishes the run without waiting", async () => {
    const cluster = await createCluster({ instances: 1, leaseMs: 30_000, delayMs: 20 });
    const run = await cluster.createRun({ via: 0, message: "a b c d e f g h i j k l m n o p" });
    while (!cluster.eventsOf(run.id).some((delivered) => delivered.event.type === "run.token"))
      await Bun.sleep(2);
    await cluster.engines[0]!.stop({ graceMs: 0 });
    expect((await cluster.store.runs.getById(run.id))?.status).toBe("pending");
    const successor = cluster.startEngine("successor");
    await successor.start();
    const ended = await cluster.waitForEnd(run.id, 5_000);
    await successor.stop({ graceMs: 0 });
    expect(ended.status).toBe("completed");
    // Restarted from the first word: a new run.started and run.step, then the tokens again from index 0.
    const events = cluster.eventsOf(run.id).map((delivered) => delivered.event);
    const restart = events.findLastIndex((event) => event.type === "run.started");
    expect(events.filter((event) => event.type === "run.started")).toHaveLength(2);
    expect(events[restart + 1]?.type).toBe("run.step");
    const next = events[restart + 2];
    expect(next?.type === "run.token" && next.data.index).toBe(0);
  });

  for (const signals of [true, false]) {
    test(`a cancel on one instance aborts the run executing on another (${signals ? "signalled" : "seen at renewal"})`, async () => {
      const cluster = await createCluster({ instances: 2, signals, leaseMs: 400, delayMs: 20 });
      const words = Array.from({ length: 200 }, (_, index) => `w${index}`).join(" ");
      const run = await cluster.createRun({ via: 0, message: words });
      while (!cluster.eventsOf(run.id).some((delivered) => delivered.event.type === "run.token"))
        await Bun.sleep(2);
      // The second instance does not hold it: the request travels to the first.
      expect(await cluster.engines[1]!.cancel(run.id)).toBe(false);
      const ended = (await cluster.store.runs.getById(run.id))!;
      expect(ended.status).toBe("failed");
      expect(ended.error).toBe("cancelled");
      const tokens = cluster.eventsOf(run.id).filter((delivered) => delivered.event.type === "run.token");
      expect(tokens.length).toBeLessThan(200);
      expect(cluster.eventsOf(run.id).at(-1)?.event.type).toBe("run.failed");
    });
  }

  test("a cancel of a run nobody executes (queued behind its channel) fails it at once", async () => {
    const cluster = await createCluster({ instances: 2, delayMs: 20 });
    const thread = Bun.randomUUIDv7();
    const words = Array.from({ length: 100 }, (_, index) => `w${index}`).join(" ");
    const head = await cluster.createRun({ thread, via: 0, message: words });
    const behind = await cluster.createRun({ thread, via: 1 });
    while (!cluster.eventsOf(head.id).some((delivered) => delivered.event.type === "run.token"))
      await Bun.sleep(2);
    expect(await cluster.engines[1]!.cancel(behind.id)).toBe(true);
    expect((await cluster.store.runs.getById(behind.id))?.error).toBe("cancelled");
    expect((await cluster.store.runs.getById(head.id))?.status).toBe("pending");
    expect((await cluster.waitForEnd(head.id)).status).toBe("completed");
  });

  test("an instance that lost its lease stops without ending the run", async () => {
    const cluster = await createCluster({ instances: 1, leaseMs: 400, delayMs: 20 });
    const words = Array.from({ length: 100 }, (_, index) => `w${index}`).join(" ");
    const run = await cluster.createRun({ via: 0, message: words });
    while (!cluster.eventsOf(run.id).some((delivered) => delivered.event.type === "run.token"))
      await Bun.sleep(2);
    // Another instance took it over (as after a long stall of this one).
    await cluster.store.runs.releaseLease(run.id, "instance-0");
    const now = new Date();
    expect(await cluster.store.runs.claim(run.id, "thief", new Date(now.getTime() + 60_000), now)).toBe(true);
    // Within a renewal period the engine gives up its execution: the tokens stop, the run stays pending.
    const deadline = Date.now() + 2_000;
    while (cluster.engines[0]!.stats().executing > 0 && Date.now() < deadline) await Bun.sleep(5);
    expect(cluster.engines[0]!.stats().executing).toBe(0);
    expect((await cluster.store.runs.getById(run.id))?.status).toBe("pending");
    expect(cluster.eventsOf(run.id).some((delivered) => delivered.event.type === "run.completed")).toBe(
      false,
    );
  });
});
