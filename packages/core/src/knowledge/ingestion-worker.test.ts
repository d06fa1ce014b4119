import { afterEach, beforeEach, expect, test } from "bun:test";
import { knowledgeDocumentSchema, webhookPayloadSchema } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import type { Store, WebhookRecord } from "../ports.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import {
  addTenant,
  createMemoryStore,
  createTestConfig,
  type ManualClock,
  manualClock,
  waitFor,
} from "../testing/index.ts";
import { documentOutboxBuilder } from "./document-events.ts";
import { createIngestionWorker, INTERNAL_INGEST_ERROR, type IngestionWorker } from "./ingestion-worker.ts";
import { createKnowledgeService } from "./knowledge-service.ts";
import {
  fakeChunk,
  fakeDetectMediaType,
  fakeEmbeddingModel,
  fakeExtract,
  fakeResolver,
  utf8,
} from "./knowledge-test-support.ts";
import type { TextExtractor } from "./ports.ts";
import { createKnowledgeSearch } from "./search.ts";

const tenant = "00000000-0000-4000-8000-00000000000a";

let store: Store;
let clock: ManualClock;
let config: PromptrunConfig;
let workers: IngestionWorker[];
let errors: Array<{ message: string; error: unknown }>;
/** The owner of each lease renewal asked for. */
let renewals: string[];

beforeEach(async () => {
  clock = manualClock();
  store = createMemoryStore({ clock });
  config = createTestConfig();
  config.knowledge = {
    ...config.knowledge,
    ingestConcurrency: 2,
    embeddingBatchSize: 2,
    maxIngestAttempts: 3,
  };
  workers = [];
  errors = [];
  renewals = [];
  await addTenant(store, "acme", tenant);
});

afterEach(async () => {
  for (const worker of workers) await worker.stop({ graceMs: 0 });
});

const service = () =>
  createKnowledgeService({
    store: store.knowledge,
    config,
    clock,
    search: createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: fakeResolver() }),
    validateEmbeddingModel: () => {},
    detectMediaType: fakeDetectMediaType,
  });

const startWorker = (
  options: {
    owner?: string;
    extract?: TextExtractor;
    model?: ReturnType<typeof fakeEmbeddingModel>;
    renewMs?: number;
  } = {},
) => {
  const worker = createIngestionWorker({
    store: {
      ...store.knowledge,
      renewDocumentLease: (id, owner, until) => {
        renewals.push(owner);
        return store.knowledge.renewDocumentLease(id, owner, until);
      },
    },
    config,
    clock,
    extract: options.extract ?? fakeExtract,
    chunk: fakeChunk,
    resolveEmbeddingModel: fakeResolver(options.model),
    buildOutbox: (tenantId) => documentOutboxBuilder({ store, clock, newId: () => uuidv7() }, tenantId),
    owner: options.owner ?? "worker-a",
    logError: (message, error) => errors.push({ message, error }),
    pollMs: 10,
    ...(options.renewMs !== undefined ? { renewMs: options.renewMs } : {}),
  });
  workers.push(worker);
  worker.start();
  return worker;
};

const add = async (text: string, filename = "notes.txt") => {
  const knowledge = service();
  if (!(await store.knowledge.getKnowledgeBase(tenant, "docs")))
    await knowledge.create(tenant, { slug: "docs" });
  return (await knowledge.addDocument(tenant, "docs", { content: utf8(text), filename })).id;
};

const documentOf = (id: string) => service().getDocument(tenant, "docs", id);
const statusOf = async (id: string) => (await documentOf(id)).status;

const subscribe = async (events: WebhookRecord["events"]) => {
  const environment = await store.environments.ensure(tenant, "production", uuidv7(), clock.now());
  await store.webhooks.create({
    id: uuidv7(),
    tenantId: tenant,
    environmentId: environment.id,
    environment: environment.name,
    url: "https://hooks.example.com/x",
    encryptedSecret: "secret",
    events,
    enabled: true,
    failureStreak: 0,
    createdAt: clock.now(),
  });
};

/** The document events in the webhook outbox, parsed as the contract's payload. */
const outboxEvents = async () => {
  const due = await store.webhooks.dueDeliveries(clock.now(), 100);
  return Promise.all(
    due.map(async (delivery) =>
      webhookPayloadSchema.parse(
        JSON.parse((await store.webhooks.getEventPayload(delivery.eventId ?? "")) ?? "null"),
      ),
    ),
  );
};

/** A promise the test resolves by hand. */
const deferred = () => {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
};

test("a document goes pending → processing → ready, its chunks searchable and document.ready queued", async () => {
  await subscribe(["document.ready"]);
  const gate = deferred();
  const model = fakeEmbeddingModel();
  const id = await add(
    "Refunds take five days.\n\nShipping is free over fifty euros.\n\nReturns need a receipt.",
  );
  expect(await statusOf(id)).toBe("pending");
  startWorker({
    model,
    extract: async (content, mediaType) => {
      await gate.promise;
      return fakeExtract(content, mediaType);
    },
  });
  await waitFor(async () => (await statusOf(id)) === "processing", "processing");
  gate.resolve();
  await waitFor(async () => (await statusOf(id)) === "ready", "ready");

  const document = await documentOf(id);
  expect(document).toMatchObject({
    chunkCount: 3,
    tokens: 14,
    cost: { total: 0.003, priced: true },
    error: null,
  });
  expect(document.readyAt).toBe(clock.now().toISOString());
  // Three chunks in batches of two.
  expect(model.calls.map((batch) => batch.length)).toEqual([2, 1]);
  const found = await service().search(tenant, "docs", { query: "shipping free", mode: "keyword" });
  expect(found.items[0]).toMatchObject({
    documentId: id,
    filename: "notes.txt",
    text: "Shipping is free over fifty euros.",
  });
  expect((await service().get(tenant, "docs")).chunkCount).toBe(3);

  const events = await outboxEvents();
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: "document.ready", data: { id, status: "ready", chunkCount: 3 } });
  expect(knowledgeDocumentSchema.parse(events[0]?.data)).toEqual(document);
  expect(errors).toEqual([]);
});

test("a failing extractor ends the document failed with its message and queues document.failed", async () => {
  await subscribe(["document.failed", "document.ready"]);
  const id = await add("BROKEN pdf bytes");
  startWorker();
  await waitFor(async () => (await statusOf(id)) === "failed", "failed");
  const document = await documentOf(id);
  expect(document).toMatchObject({
    status: "failed",
    error: "the PDF could not be parsed: bad xref table",
    chunkCount: 0,
    cost: null,
    readyAt: null,
  });
  const events = await outboxEvents();
  expect(events.map((event) => event.type)).toEqual(["document.failed"]);
  expect(events[0]?.data).toEqual(document);
  expect(errors).toEqual([]);
});

test("an embedding failure fails the document with its message and the cost spent so far", async () => {
  config.knowledge = { ...config.knowledge, embeddingBatchSize: 1 };
  const id = await add("first paragraph\n\nEMBEDFAIL second");
  startWorker();
  await waitFor(async () => (await statusOf(id)) === "failed", "failed");
  expect(await documentOf(id)).toMatchObject({
    error: "fake:bow gave up after 3 attempts: HTTP 500",
    cost: { total: 0.001, priced: true },
  });
});

test("an unexpected error fails the document with a generic message and is logged; empty text says so", async () => {
  const id = await add("anything");
  const empty = await add("   \n\n  ", "blank.txt");
  startWorker({
    extract: async (content, mediaType) => {
      const text = new TextDecoder().decode(content);
      if (text === "anything") throw new TypeError("boom");
      return fakeExtract(content, mediaType);
    },
  });
  await waitFor(
    async () => (await statusOf(id)) === "failed" && (await statusOf(empty)) === "failed",
    "failed",
  );
  expect((await documentOf(id)).error).toBe(INTERNAL_INGEST_ERROR);
  expect((await documentOf(empty)).error).toContain("no text to index");
  expect(errors.map((entry) => (entry.error as Error).message)).toEqual(["boom"]);
});

test("two workers on one store never ingest the same document twice", async () => {
  const ids: string[] = [];
  for (let index = 0; index < 20; index++)
    ids.push(await add(`document ${index} alpha\n\ndocument ${index} beta`));
  const extracted = new Map<string, number>();
  let inFlight = 0;
  let mostInFlight = 0;
  const counting: TextExtractor = async (content, mediaType) => {
    const text = new TextDecoder().decode(content);
    extracted.set(text, (extracted.get(text) ?? 0) + 1);
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    await Bun.sleep(2);
    inFlight--;
    return fakeExtract(content, mediaType);
  };
  startWorker({ owner: "a", extract: counting });
  startWorker({ owner: "b", extract: counting });
  await waitFor(async () => {
    const statuses = await Promise.all(ids.map(statusOf));
    return statuses.every((status) => status === "ready");
  }, "all ready");
  expect(extracted.size).toBe(20);
  // Two workers of ingestConcurrency 2.
  expect(mostInFlight).toBeGreaterThan(1);
  expect(mostInFlight).toBeLessThanOrEqual(4);
  expect([...extracted.values()].every((count) => count === 1)).toBe(true);
  const base = await store.knowledge.getKnowledgeBase(tenant, "docs");
  const vectors = await store.knowledge.loadVectors(base?.id ?? "");
  expect(vectors.chunkIds).toHaveLength(40);
  expect(new Set(vectors.chunkIds).size).toBe(40);
});

test("a worker that stops mid-ingestion abandons the document; after its lease expires another finishes it once", async () => {
  const hang = deferred();
  const id = await add("one\n\ntwo\n\nthree");
  const crashing = startWorker({
    owner: "crashing",
    renewMs: 5,
    extract: async (content, mediaType) => {
      await hang.promise;
      return fakeExtract(content, mediaType);
    },
  });
  await waitFor(async () => (await statusOf(id)) === "processing", "processing");
  await waitFor(() => renewals.includes("crashing"), "a renewal");
  await crashing.stop({ graceMs: 0 });
  expect(crashing.active()).toBe(1);
  const renewed = renewals.length;

  const survivor = startWorker({ owner: "survivor" });
  await Bun.sleep(50);
  // The stopped worker no longer renews (it renewed every 5 ms while running).
  expect(renewals.length).toBe(renewed);
  // The lease still holds: nobody else takes the document.
  expect(await statusOf(id)).toBe("processing");
  clock.advance(30_001);
  await waitFor(async () => (await statusOf(id)) === "ready", "ready");
  expect(await documentOf(id)).toMatchObject({ chunkCount: 3 });

  // The abandoned work finishing late writes nothing.
  hang.resolve();
  await waitFor(() => crashing.active() === 0, "the abandoned job to end");
  const base = await store.knowledge.getKnowledgeBase(tenant, "docs");
  expect((await store.knowledge.loadVectors(base?.id ?? "")).chunkIds).toHaveLength(3);
  expect(survivor.active()).toBe(0);
  expect(errors).toEqual([]);
});

test("a worker whose lease was taken over drops its result silently", async () => {
  const slow = deferred();
  const id = await add("alpha\n\nbeta");
  const first = startWorker({
    owner: "first",
    extract: async (content, mediaType) => {
      await slow.promise;
      return fakeExtract(content, mediaType);
    },
  });
  await waitFor(async () => (await statusOf(id)) === "processing", "processing");
  clock.advance(30_001);
  // Another instance takes the expired lease and finishes.
  startWorker({ owner: "second" });
  await waitFor(async () => (await statusOf(id)) === "ready", "ready");
  const readyAt = (await documentOf(id)).readyAt;
  slow.resolve();
  await waitFor(() => first.active() === 0, "the first job to end");
  expect(await documentOf(id)).toMatchObject({ status: "ready", chunkCount: 2, readyAt });
  const base = await store.knowledge.getKnowledgeBase(tenant, "docs");
  expect((await store.knowledge.loadVectors(base?.id ?? "")).chunkIds).toHaveLength(2);
  expect(errors).toEqual([]);
});

test("a document interrupted more than maxIngestAttempts times fails saying so", async () => {
  const id = await add("text");
  for (let attempt = 0; attempt < 3; attempt++) {
    expect(
      await store.knowledge.claimDocument("dead", new Date(clock.now().getTime() + 30_000), clock.now()),
    ).not.toBeNull();
    clock.advance(30_001);
  }
  startWorker();
  await waitFor(async () => (await statusOf(id)) === "failed", "failed");
  expect((await documentOf(id)).error).toContain("ingestion was interrupted 3 times");
});

test("stop waits for documents in flight within the grace period", async () => {
  const id = await add("alpha\n\nbeta");
  const worker = startWorker({
    extract: async (content, mediaType) => {
      await Bun.sleep(50);
      return fakeExtract(content, mediaType);
    },
  });
  await waitFor(async () => (await statusOf(id)) === "processing", "processing");
  await worker.stop({ graceMs: 5_000 });
  expect(await statusOf(id)).toBe("ready");
  expect(worker.active()).toBe(0);
});

test("a document deleted mid-ingestion: the renewal fails and the work stops before embedding", async () => {
  const gate = deferred();
  const model = fakeEmbeddingModel();
  const id = await add("alpha\n\nbeta");
  const worker = startWorker({
    model,
    renewMs: 5,
    extract: async (content, mediaType) => {
      await gate.promise;
      return fakeExtract(content, mediaType);
    },
  });
  await waitFor(async () => (await statusOf(id)) === "processing", "processing");
  await service().deleteDocument(tenant, "docs", id);
  await Bun.sleep(30);
  gate.resolve();
  await waitFor(() => worker.active() === 0, "the job to end");
  expect(model.calls).toEqual([]);
  expect(errors).toEqual([]);
});
