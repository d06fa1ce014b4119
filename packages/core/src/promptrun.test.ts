import { describe, expect, test } from "bun:test";
import { webhookPayloadSchema } from "@promptrun/contract";
import { Webhook } from "standardwebhooks";
import { createInMemoryThreadEventBus } from "./events/index.ts";
import {
  fakeChunk,
  fakeDetectMediaType,
  fakeExtract,
  fakeResolver,
} from "./knowledge/knowledge-test-support.ts";
import type { ThreadEventBus } from "./ports.ts";
import { createPromptrun } from "./promptrun.ts";
import { manualClock } from "./testing/clock.ts";
import { createMemoryStore } from "./testing/memory-store.ts";
import { recordingEngine } from "./testing/recording-engine.ts";
import { greetPrompt } from "./testing/service-fixture.ts";
import { createTestConfig } from "./testing/test-config.ts";
import { waitFor } from "./testing/wait-for.ts";

const closeCounting = (bus: ThreadEventBus) => {
  let closed = 0;
  return {
    bus: { ...bus, close: async () => void closed++ } satisfies ThreadEventBus,
    closed: () => closed,
  };
};

describe("createPromptrun", () => {
  test("wires every service over one store, secret box and engine", async () => {
    const clock = manualClock();
    const engine = recordingEngine();
    const promptrun = createPromptrun({
      store: createMemoryStore(),
      config: createTestConfig(),
      clock,
      engine,
    });
    const { services } = promptrun;
    expect(promptrun.engine).toBe(engine);

    const { tenant, apiKey } = await services.tenants.create("Acme");
    const authenticated = await services.auth.authenticate(`Bearer ${apiKey}`);
    expect(authenticated.id).toBe(tenant.id);
    expect((await services.environments.list(tenant.id)).map((environment) => environment.name)).toEqual([
      "production",
    ]);
    await services.environments.setEnvVars(tenant.id, "production", { GREETING: "hi" });
    await services.prompts.push(tenant.id, [greetPrompt]);
    const created = await services.runs.create(authenticated, "greet", "production", {
      inputs: { name: "Ada" },
    });
    expect(engine.enqueued.map(({ run }) => run.id)).toEqual([created.id]);
    expect((await services.runs.get(tenant.id, created.id)).status).toBe("pending");
    const token = await services.streamTokens.issue(authenticated, created.thread);
    expect((await services.streamTokens.verify(token.token, created.thread)).tenantId).toBe(tenant.id);
    expect(await services.webhooks.list(tenant.id)).toEqual([]);
    expect(services.rateLimits.state(tenant.id, "runs.create").remaining).toBe(199);
    expect(services.rateLimits.state(tenant.id, "stream-token").remaining).toBe(199);
  });

  test("start and stop drive the engine and close the event bus once", async () => {
    const clock = manualClock();
    const engine = recordingEngine();
    const events = closeCounting(createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock }));
    const promptrun = createPromptrun({
      store: createMemoryStore(),
      config: createTestConfig(),
      clock,
      engine,
      events: events.bus,
    });
    expect(promptrun.services.events).toBe(events.bus);
    await promptrun.start();
    expect(engine.started).toBe(true);
    await promptrun.stop({ graceMs: 10 });
    expect(engine.started).toBe(false);
    await promptrun.stop();
    expect(events.closed()).toBe(1);
  });

  test("with the real engine, a dev:echo run completes, streams its events and lands in thread memory", async () => {
    const store = createMemoryStore();
    const promptrun = createPromptrun({ store, config: createTestConfig() });
    const { services } = promptrun;
    const { tenant, apiKey } = await services.tenants.create("Acme");
    const authenticated = await services.auth.authenticate(`Bearer ${apiKey}`);
    await services.prompts.push(tenant.id, [greetPrompt]);
    const thread = "0190f1f0-0000-7000-8000-0000000000aa";
    const seen: string[] = [];
    const finished = new Promise<void>((resolve) => {
      services.events.subscribe(tenant.id, thread, ({ event }) => {
        seen.push(event.type);
        if (event.type === "run.completed" || event.type === "run.failed") resolve();
      });
    });
    await promptrun.start();
    try {
      const created = await services.runs.create(authenticated, "greet", "latest", {
        inputs: { name: "Ada" },
        thread,
      });
      await finished;
      const run = await services.runs.get(tenant.id, created.id);
      expect(run).toMatchObject({ status: "completed", output: "Say hello to Ada.", error: null });
      expect(seen[0]).toBe("run.started");
      expect(seen.at(-1)).toBe("run.completed");
      expect(seen).toContain("run.token");
      const memory = (await services.threads.get(tenant.id, thread)).channels.default ?? [];
      expect(memory.map((message) => message.role)).toEqual(["user", "assistant"]);
    } finally {
      await promptrun.stop({ graceMs: 1_000 });
    }
  });

  test("knowledge: a document added through the service is ingested by the started worker and searchable", async () => {
    const promptrun = createPromptrun({
      store: createMemoryStore(),
      config: createTestConfig(),
      engine: recordingEngine(),
      knowledgeParts: {
        extract: fakeExtract,
        chunk: fakeChunk,
        resolveEmbeddingModel: fakeResolver(),
        detectMediaType: fakeDetectMediaType,
      },
    });
    const { services } = promptrun;
    const { tenant } = await services.tenants.create("Acme");
    await services.knowledge.create(tenant.id, { slug: "handbook" });
    await expect(
      services.knowledge.create(tenant.id, { slug: "x", embeddingModel: "nope:m" }),
    ).rejects.toMatchObject({
      code: "invalid",
    });
    await promptrun.start();
    try {
      const { id } = await services.knowledge.addDocument(tenant.id, "handbook", {
        content: new TextEncoder().encode("Vacation is 30 days.\n\nParking is in the basement."),
        filename: "policy.md",
      });
      await waitFor(
        async () => (await services.knowledge.getDocument(tenant.id, "handbook", id)).status === "ready",
      );
      const found = await services.knowledge.search(tenant.id, "handbook", { query: "where is parking" });
      expect(found.items[0]).toMatchObject({ documentId: id, text: "Parking is in the basement." });
      const direct = await promptrun.knowledge.search(tenant.id, "handbook", {
        query: "vacation",
        topK: 1,
        mode: "keyword",
      });
      expect(direct.hits.map((hit) => hit.text)).toEqual(["Vacation is 30 days."]);
    } finally {
      await promptrun.stop({ graceMs: 1_000 });
    }
  });

  test("knowledge: document.ready and document.failed reach a subscribed webhook, signed, with the document", async () => {
    const received: Array<{ body: string; headers: Record<string, string> }> = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        received.push({ body: await request.text(), headers: Object.fromEntries(request.headers) });
        return new Response("ok");
      },
    });
    const promptrun = createPromptrun({
      store: createMemoryStore(),
      config: createTestConfig({ allowPrivateUrls: true }),
      engine: recordingEngine(),
      knowledgeParts: {
        extract: fakeExtract,
        chunk: fakeChunk,
        resolveEmbeddingModel: fakeResolver(),
        detectMediaType: fakeDetectMediaType,
      },
    });
    const { services } = promptrun;
    const { tenant } = await services.tenants.create("Acme");
    const { secret } = await services.webhooks.create(tenant.id, {
      environment: "production",
      url: `http://127.0.0.1:${receiver.port}/hook`,
      events: ["document.ready", "document.failed"],
    });
    await services.knowledge.create(tenant.id, { slug: "handbook" });
    await promptrun.start();
    try {
      const good = await services.knowledge.addDocument(tenant.id, "handbook", {
        content: new TextEncoder().encode("Parking is in the basement."),
        filename: "policy.txt",
      });
      const bad = await services.knowledge.addDocument(tenant.id, "handbook", {
        content: new TextEncoder().encode("BROKEN"),
        filename: "scan.txt",
      });
      await waitFor(() => received.length === 2, "two deliveries");
      const payloads = received.map((request) =>
        webhookPayloadSchema.parse(new Webhook(secret).verify(request.body, request.headers)),
      );
      const byType = Object.fromEntries(payloads.map((payload) => [payload.type, payload.data]));
      expect(byType["document.ready"]).toEqual(
        await services.knowledge.getDocument(tenant.id, "handbook", good.id),
      );
      expect(byType["document.failed"]).toMatchObject({
        id: bad.id,
        status: "failed",
        error: "the PDF could not be parsed: bad xref table",
      });
    } finally {
      await promptrun.stop({ graceMs: 1_000 });
      receiver.stop(true);
    }
  });
});
