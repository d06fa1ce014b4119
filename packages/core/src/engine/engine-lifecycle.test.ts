import { afterEach, describe, expect, test } from "bun:test";
import type { EngineMetrics } from "../services.ts";
import type { FakeProviderServer } from "../testing/fake-providers/index.ts";
import { startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createMemoryStore } from "../testing/memory-store.ts";
import { waitFor } from "../testing/wait-for.ts";
import {
  createEngineFixture,
  type EngineFixture,
  type FixtureOptions,
  sentMessages,
} from "./engine-test-fixture.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const track = <T extends FakeProviderServer | EngineFixture>(resource: T): T => {
  cleanups.push(() => resource.close());
  return resource;
};

const openAIOptions = (server: FakeProviderServer, options: FixtureOptions = {}): FixtureOptions => ({
  ...options,
  config: {
    providers: { openai: { apiKey: "sk-server", baseUrl: server.baseUrl }, anthropic: {}, compatible: [] },
    ...options.config,
  },
});

describe("engine cancel", () => {
  test("cancelling mid-stream abandons the upstream stream within 100 ms and keeps the partial cost", async () => {
    const openai = track(
      startFakeOpenAI({
        type: "stream",
        tokens: Array.from({ length: 500 }, (_, index) => `w${index} `),
        tokenDelayMs: 10,
      }),
    );
    const fixture = track(await createEngineFixture(openAIOptions(openai)));
    await fixture.engine.start();
    const run = await fixture.createRun();
    await waitFor(
      () => fixture.eventsOf(run.id).filter((event) => event.event.type === "run.token").length >= 3,
      "three run.token events",
    );

    const cancelledAt = Date.now();
    expect(await fixture.engine.cancel(run.id)).toBe(true);
    const stream = await openai.waitForStreamEnd(0);
    expect(stream.outcome).toBe("client-closed");
    expect(stream.endedAt! - cancelledAt).toBeLessThan(100);
    expect(stream.tokensSent).toBeLessThan(500);

    const ended = (await fixture.store.runs.getById(run.id))!;
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("cancelled");
    expect(ended.tokenUsage).toBeNull();
    // gpt-4o-mini is priced: the streamed chunks (and the prompt) are costed as retries.
    expect(ended.cost?.retries.output).toBeGreaterThan(0);
    expect(ended.cost?.success.total).toBe(0);
    expect(ended.cost?.total).toBe(ended.cost!.retries.total);
    const last = fixture.eventsOf(run.id).at(-1)!.event;
    expect(last.type === "run.failed" && last.data.error).toBe("cancelled");
    // Already ended: a second cancel ends nothing.
    expect(await fixture.engine.cancel(run.id)).toBe(false);
  });

  test("cancelling a queued run removes it before it reaches the provider", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["x"], holdBeforeFinish: held }));
    const fixture = track(await createEngineFixture(openAIOptions(openai)));
    await fixture.engine.start();
    const thread = Bun.randomUUIDv7();
    const first = await fixture.createRun({ thread });
    const second = await fixture.createRun({ thread });
    await openai.waitForRequests(1);
    expect(fixture.engine.stats()).toEqual({
      queued: { onsite: 0, normal: 1, low: 0 },
      executing: 1,
      queuedInMemory: 1,
    });

    expect(await fixture.engine.cancel(second.id)).toBe(true);
    const cancelled = (await fixture.store.runs.getById(second.id))!;
    expect(cancelled.status).toBe("failed");
    expect(cancelled.error).toBe("cancelled");
    expect(cancelled.cost?.total).toBe(0);
    expect(fixture.engine.stats().queued.normal).toBe(0);

    release();
    expect((await fixture.waitForEnd(first.id)).status).toBe("completed");
    await Bun.sleep(20);
    expect(openai.requests).toHaveLength(1);
  });

  test("cancelling a pending run the engine does not hold fails it in the store; unknown ids give false", async () => {
    const fixture = track(await createEngineFixture({ prompt: { model: "dev:echo" } }));
    const run = await fixture.createRun({ enqueue: false });
    expect(await fixture.engine.cancel(run.id)).toBe(true);
    expect((await fixture.store.runs.getById(run.id))?.error).toBe("cancelled");
    expect(await fixture.engine.cancel(Bun.randomUUIDv7())).toBe(false);
  });
});

describe("engine crash safety and shutdown", () => {
  test("start() resumes a run that was executing when the process died, exactly once", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["resumed"] }));
    const fixture = track(await createEngineFixture(openAIOptions(openai)));
    const run = await fixture.createRun({ enqueue: false });
    // The previous process had started attempt 1 and then died.
    await fixture.store.runs.markStarted(run.id, new Date(), 1);
    await fixture.engine.start();
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("resumed");
    expect(ended.attempts).toBe(2);
    await Bun.sleep(20);
    expect(openai.requests).toHaveLength(1);
    const started = fixture.eventsOf(run.id)[0]!.event;
    expect(started.type === "run.started" && started.data.attempt).toBe(2);
  });

  test("a run interrupted by restarts too many times fails instead of looping forever", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["never"] }));
    const fixture = track(await createEngineFixture(openAIOptions(openai)));
    const run = await fixture.createRun({ enqueue: false });
    // Every earlier process died while running it (say it takes the process down with it).
    await fixture.store.runs.markStarted(run.id, new Date(), fixture.config.run.maxAttempts + 10);
    await fixture.engine.start();
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toContain("interrupted");
    expect(openai.requests).toHaveLength(0);
  });

  test("resumed runs keep their order and decrypt their envVars from the record", async () => {
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "dev:echo", messages: [{ role: "user", content: "{{message}} {{env.SUFFIX}}" }] },
        // The environment sets it empty: a run without its own envVars renders it as "".
        environmentEnv: { SUFFIX: "" },
      }),
    );
    const thread = Bun.randomUUIDv7();
    const first = await fixture.createRun({
      thread,
      inputs: { message: "first" },
      envVars: { SUFFIX: "secret-one" },
      encryptEnvVars: true,
      enqueue: false,
    });
    const second = await fixture.createRun({ thread, inputs: { message: "second" }, enqueue: false });
    await fixture.engine.start();
    expect((await fixture.waitForEnd(first.id)).output).toBe("first secret-one");
    expect((await fixture.waitForEnd(second.id)).output).toBe("second ");
    expect((await fixture.store.runs.getById(first.id))?.encryptedEnvVars).toBeNull();
    const { messages: memory } = await fixture.store.runs.memory(fixture.tenantId, thread, "default");
    expect(memory.map((message) => message.content)).toEqual([
      "first secret-one",
      "first secret-one",
      "second ",
      "second ",
    ]);
  });

  test("stop() aborts in-flight runs after the grace period without failing them; the next start finishes them", async () => {
    const store = createMemoryStore();
    const slow = track(
      startFakeOpenAI({ type: "stream", tokens: Array.from({ length: 200 }, () => "."), tokenDelayMs: 20 }),
    );
    const first = await createEngineFixture(openAIOptions(slow, { store }));
    await first.engine.start();
    const run = await first.createRun();
    await slow.waitForRequests(1);
    await first.engine.stop({ graceMs: 50 });
    expect((await slow.waitForStreamEnd(0)).outcome).toBe("client-closed");
    const interrupted = (await store.runs.getById(run.id))!;
    expect(interrupted.status).toBe("pending");
    expect(interrupted.attempts).toBe(1);
    expect(first.eventsOf(run.id).some((event) => event.event.type === "run.failed")).toBe(false);
    // Runs handed over after stop are left for the next start.
    const late = await first.createRun();
    await Bun.sleep(20);
    expect((await store.runs.getById(late.id))?.status).toBe("pending");
    await first.close();

    const fast = track(startFakeOpenAI({ type: "stream", tokens: ["done"] }));
    const second = track(await createEngineFixture(openAIOptions(fast, { store })));
    await second.engine.start();
    const resumed = await second.waitForEnd(run.id);
    expect(resumed.status).toBe("completed");
    expect(resumed.attempts).toBe(2);
    expect((await second.waitForEnd(late.id)).status).toBe("completed");
    expect(fast.requests).toHaveLength(2);
  });

  test("stop() waits for in-flight runs that finish within the grace period", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["a", "b", "c"], tokenDelayMs: 30 }));
    const fixture = track(await createEngineFixture(openAIOptions(openai)));
    await fixture.engine.start();
    const run = await fixture.createRun();
    await openai.waitForRequests(1);
    await fixture.engine.stop({ graceMs: 5_000 });
    expect((await fixture.store.runs.getById(run.id))?.status).toBe("completed");
  });
});

describe("engine limits, webhooks and metrics", () => {
  test("the global concurrency limit holds runs of other threads back", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["x"], holdBeforeFinish: held }));
    const fixture = track(await createEngineFixture(openAIOptions(openai, { config: { concurrency: 2 } })));
    await fixture.engine.start();
    const runs = await Promise.all([1, 2, 3].map(() => fixture.createRun()));
    await openai.waitForRequests(2);
    await Bun.sleep(30);
    expect(openai.requests).toHaveLength(2);
    expect(fixture.engine.stats()).toEqual({
      queued: { onsite: 0, normal: 1, low: 0 },
      executing: 2,
      queuedInMemory: 1,
    });
    release();
    for (const run of runs) expect((await fixture.waitForEnd(run.id)).status).toBe("completed");
  });

  test("fair share: four tenants saturating their slots leave room, a fifth tenant's run starts promptly", async () => {
    const fixture = track(
      await createEngineFixture({
        prompt: { model: "dev:echo", params: { delayMs: 60_000 } },
        config: { concurrency: 32, tenantConcurrency: 8 },
      }),
    );
    await fixture.engine.start();
    const started = (runId: string) =>
      fixture.received.some(({ event }) => event.type === "run.token" && event.data.runId === runId);
    for (const tenant of ["busy-1", "busy-2", "busy-3", "busy-4"])
      for (let index = 0; index < 10; index++)
        await fixture.createRun({ tenantId: tenant, inputs: { message: "slow words" } });
    const deadline = Date.now() + 10_000;
    while (fixture.engine.stats().executing < 28 && Date.now() < deadline) await Bun.sleep(10);
    expect(fixture.engine.stats().executing).toBe(28);
    // The fifth tenant (the fixture's own, so its events are watched) is not held for a minute.
    const newcomer = await fixture.createRun({ inputs: { message: "first words" } });
    while (!started(newcomer.id) && Date.now() < deadline + 10_000) await Bun.sleep(10);
    expect(started(newcomer.id)).toBe(true);
    expect(fixture.engine.stats().executing).toBe(29);
  }, 30_000);

  test("webhook deliveries are built from the final run and written with it; metrics are reported", async () => {
    const seenRuns: string[] = [];
    const metricEvents: string[] = [];
    const queueDepths: number[] = [];
    const metrics: EngineMetrics = {
      providerCall: (model, outcome, latencyMs) => {
        expect(latencyMs).toBeGreaterThanOrEqual(0);
        metricEvents.push(`call:${model}:${outcome}`);
      },
      runFinished: (outcome, model, durationMs) => {
        expect(durationMs).toBeGreaterThanOrEqual(0);
        metricEvents.push(`finished:${model}:${outcome}`);
      },
      queueDepth: (depth) => queueDepths.push(depth.normal),
    };
    const openai = track(
      startFakeOpenAI([
        { type: "error", status: 503 },
        { type: "stream", tokens: ["hi"], usage: { input: 3, output: 1 } },
      ]),
    );
    const fixture = track(
      await createEngineFixture(
        openAIOptions(openai, {
          engine: {
            metrics,
            buildWebhookDeliveries: async (run) => {
              seenRuns.push(`${run.status}:${run.output}:${run.attempts}:${run.startedAt instanceof Date}`);
              return [];
            },
          },
        }),
      ),
    );
    await fixture.engine.start();
    const ended = await fixture.waitForEnd((await fixture.createRun()).id);
    expect(ended.status).toBe("completed");
    expect(seenRuns).toEqual(["completed:hi:2:true"]);
    expect(metricEvents).toEqual([
      "call:openai:gpt-4o-mini:error",
      "call:openai:gpt-4o-mini:ok",
      "finished:openai:gpt-4o-mini:completed",
    ]);
    // Queued on enqueue, then taken at once.
    expect(queueDepths.at(-1)).toBe(0);
    expect(sentMessages(openai.requests[1]!.body)).toHaveLength(2);
  });
});
