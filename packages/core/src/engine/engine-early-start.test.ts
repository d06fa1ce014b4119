import { afterEach, describe, expect, test } from "bun:test";
import type { FakeProviderServer } from "../testing/fake-providers/index.ts";
import { startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { createEngineFixture, type EngineFixture } from "./engine-test-fixture.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const track = <T extends FakeProviderServer | EngineFixture>(resource: T): T => {
  cleanups.push(() => resource.close());
  return resource;
};

const openAIConfig = (server: FakeProviderServer) => ({
  providers: { openai: { apiKey: "sk-server-key", baseUrl: server.baseUrl }, anthropic: {}, compatible: [] },
});

/** Waits until `check` holds, polling the event loop. */
const until = async (check: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(2);
  }
};

describe("a run handed over before its insert commits", () => {
  test("calls the provider at once, but publishes and writes nothing until the commit lands", async () => {
    const openai = track(startFakeOpenAI({ type: "stream", tokens: ["early ", "bird"] }));
    const fixture = track(await createEngineFixture({ config: openAIConfig(openai) }));
    await fixture.engine.start();
    const commit = Promise.withResolvers<void>();
    const run = await fixture.createRun({ commit: commit.promise });

    await openai.waitForRequests(1);
    // The whole stream has been read meanwhile, yet nothing of the run is visible.
    await openai.waitForStreamEnd(0);
    await Bun.sleep(20);
    expect(fixture.eventsOf(run.id)).toHaveLength(0);
    expect(await fixture.store.runs.getById(run.id)).toBeNull();

    commit.resolve();
    const ended = await fixture.waitForEnd(run.id);
    expect(ended.status).toBe("completed");
    expect(ended.output).toBe("early bird");
    expect(ended.attempts).toBe(1);
    expect(fixture.eventsOf(run.id).map((delivered) => delivered.event.type)).toEqual([
      "run.started",
      "run.token",
      "run.token",
      "run.completed",
    ]);
  });

  test("is dropped without a trace when its insert fails: provider call aborted, slot freed", async () => {
    const openai = track(
      startFakeOpenAI((request) =>
        request.index === 0
          ? { type: "stream", tokens: ["never ", "seen"], hangAfterTokens: 1 }
          : { type: "stream", tokens: ["next"] },
      ),
    );
    const fixture = track(
      await createEngineFixture({
        config: { ...openAIConfig(openai), concurrency: 1, tenantConcurrency: 1 },
      }),
    );
    await fixture.engine.start();
    const commit = Promise.withResolvers<void>();
    const doomed = await fixture.createRun({ commit: commit.promise });
    await openai.waitForRequests(1);
    // Queued behind it (the only slot is taken).
    const next = await fixture.createRun({ inputs: { message: "after" } });
    expect(fixture.engine.stats().executing).toBe(1);

    commit.reject(new Error("disk full"));
    const record = await openai.waitForStreamEnd(0);
    expect(record.outcome).toBe("client-closed");
    expect((await fixture.waitForEnd(next.id)).output).toBe("next");
    expect(fixture.eventsOf(doomed.id)).toHaveLength(0);
    expect(await fixture.store.runs.getById(doomed.id)).toBeNull();
  });

  test("a queued run whose insert fails leaves the queue", async () => {
    const openai = track(
      startFakeOpenAI({ type: "stream", tokens: ["slow"], holdBeforeFinish: Bun.sleep(150) }),
    );
    const fixture = track(
      await createEngineFixture({
        config: { ...openAIConfig(openai), concurrency: 1, tenantConcurrency: 1 },
      }),
    );
    await fixture.engine.start();
    const first = await fixture.createRun();
    await openai.waitForRequests(1);
    const commit = Promise.withResolvers<void>();
    const doomed = await fixture.createRun({ commit: commit.promise });
    expect(fixture.engine.stats().queued.normal).toBe(1);

    commit.reject(new Error("conflict"));
    await until(() => fixture.engine.stats().queued.normal === 0);
    await fixture.waitForEnd(first.id);
    await Bun.sleep(20);
    expect(openai.requests).toHaveLength(1);
    expect(fixture.eventsOf(doomed.id)).toHaveLength(0);
  });
});
