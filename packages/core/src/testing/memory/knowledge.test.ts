import { beforeEach, expect, test } from "bun:test";
import type { KnowledgeBaseRecord, NewDocument } from "../../knowledge/ports.ts";
import type { Store } from "../../ports.ts";
import { uuidv7 } from "../../services/uuidv7.ts";
import { manualClock } from "../clock.ts";
import { createMemoryStore } from "../memory-store.ts";
import { addTenant } from "../store-fixtures.ts";

const tenant = "00000000-0000-4000-8000-00000000000a";
const clock = manualClock();
let store: Store;
let base: KnowledgeBaseRecord;

const lease = () => new Date(clock.now().getTime() + 30_000);

beforeEach(async () => {
  store = createMemoryStore({ clock });
  await addTenant(store, "acme", tenant);
  base = {
    id: uuidv7(),
    tenantId: tenant,
    slug: "kb",
    description: null,
    embeddingModel: "dev:hash",
    chunking: { maxTokens: 512, overlap: 64 },
    createdAt: clock.now(),
  };
  await store.knowledge.createKnowledgeBase(base);
});

const newDocument = (overrides: Partial<NewDocument> = {}): NewDocument => {
  clock.advance(1);
  return {
    id: uuidv7(),
    tenantId: tenant,
    knowledgeBaseId: base.id,
    knowledgeBaseSlug: base.slug,
    externalId: null,
    filename: "a.txt",
    mediaType: "text/plain",
    metadata: {},
    bytes: 3,
    createdAt: clock.now(),
    content: new Uint8Array([1, 2, 3]),
    ...overrides,
  };
};

const complete = (id: string, owner: string, texts: string[]) =>
  store.knowledge.completeDocument(id, owner, {
    chunks: texts.map((text, ordinal) => ({
      id: uuidv7(),
      documentId: id,
      ordinal,
      text,
      tokens: 1,
      embedding: new Float32Array([1, 0]),
    })),
    tokens: texts.length,
    cost: { total: 0, priced: true },
    readyAt: clock.now(),
    outbox: () => [],
  });

test("claims go oldest first, once each, and an expired lease can be claimed again", async () => {
  const first = newDocument();
  const second = newDocument();
  await store.knowledge.addDocument(second);
  await store.knowledge.addDocument(first);
  const claimedA = await store.knowledge.claimDocument("a", lease(), clock.now());
  const claimedB = await store.knowledge.claimDocument("b", lease(), clock.now());
  expect([claimedA?.document.id, claimedB?.document.id]).toEqual([first.id, second.id]);
  expect(claimedA).toMatchObject({ document: { status: "processing", attempts: 1 }, content: first.content });
  expect(claimedA?.knowledgeBase.id).toBe(base.id);
  expect(await store.knowledge.claimDocument("c", lease(), clock.now())).toBeNull();

  expect(await store.knowledge.renewDocumentLease(first.id, "b", lease())).toBe(false);
  expect(await store.knowledge.renewDocumentLease(first.id, "a", lease())).toBe(true);
  clock.advance(30_000);
  const retaken = await store.knowledge.claimDocument("c", lease(), clock.now());
  expect(retaken?.document).toMatchObject({ id: first.id, attempts: 2 });
  // The previous owner lost it: renew and complete refuse, nothing is written.
  expect(await store.knowledge.renewDocumentLease(first.id, "a", lease())).toBe(false);
  expect(await complete(first.id, "a", ["x"])).toBeNull();
  expect(await complete(first.id, "c", ["x", "y"])).toMatchObject({ status: "ready", chunkCount: 2 });
  expect(await store.knowledge.renewDocumentLease(first.id, "c", lease())).toBe(false);
  expect(await store.knowledge.getKnowledgeBase(tenant, "kb")).toMatchObject({
    documentCount: 2,
    chunkCount: 2,
    bytes: 6,
  });
});

test("failDocument ends a leased document failed, drops the upload and writes the outbox rows", async () => {
  const document = newDocument();
  await store.knowledge.addDocument(document);
  await store.knowledge.claimDocument("a", lease(), clock.now());
  let seen: string | undefined;
  const failed = await store.knowledge.failDocument(document.id, "a", {
    error: "bad pdf",
    cost: null,
    at: clock.now(),
    outbox: (record) => {
      seen = `${record.status} ${record.error}`;
      return [];
    },
  });
  expect(seen).toBe("failed bad pdf");
  expect(failed).toMatchObject({ status: "failed", error: "bad pdf", readyAt: null });
  expect(await store.knowledge.claimDocument("b", lease(), clock.now())).toBeNull();
  expect(
    await store.knowledge.failDocument(document.id, "a", {
      error: "x",
      cost: null,
      at: clock.now(),
      outbox: () => [],
    }),
  ).toBeNull();
});

test("replacing by externalId and deleting remove chunks and move the generation", async () => {
  const original = newDocument({ externalId: "ext" });
  await store.knowledge.addDocument(original);
  await store.knowledge.claimDocument("a", lease(), clock.now());
  await complete(original.id, "a", ["old text"]);
  const before = await store.knowledge.vectorGeneration(base.id);
  const replacement = newDocument({ externalId: "ext" });
  expect(await store.knowledge.addDocument(replacement)).toEqual({ replaced: [original.id] });
  expect(await store.knowledge.vectorGeneration(base.id)).not.toBe(before);
  expect(await store.knowledge.keywordSearch(base.id, "old", 10)).toEqual([]);
  expect(await store.knowledge.getDocument(tenant, base.id, original.id)).toBeNull();

  await store.knowledge.claimDocument("a", lease(), clock.now());
  await complete(replacement.id, "a", ["new text"]);
  expect((await store.knowledge.loadVectors(base.id)).chunkIds).toHaveLength(1);
  expect(await store.knowledge.deleteKnowledgeBase(tenant, "kb")).toBe(true);
  expect((await store.knowledge.loadVectors(base.id)).chunkIds).toEqual([]);
  expect(await store.knowledge.getDocument(tenant, base.id, replacement.id)).toBeNull();
  expect(await store.knowledge.deleteKnowledgeBase(tenant, "kb")).toBe(false);
});

test("knowledge bases: slug taken is a conflict, slug order with a keyset cursor, tenant scoped", async () => {
  await expect(store.knowledge.createKnowledgeBase({ ...base, id: uuidv7() })).rejects.toMatchObject({
    code: "conflict",
  });
  for (const slug of ["c", "a"]) await store.knowledge.createKnowledgeBase({ ...base, id: uuidv7(), slug });
  const first = await store.knowledge.listKnowledgeBases(tenant, { limit: 2 });
  expect(first.items.map((item) => item.slug)).toEqual(["a", "c"]);
  const rest = await store.knowledge.listKnowledgeBases(tenant, { limit: 2, cursor: first.nextCursor });
  expect(rest).toMatchObject({ items: [{ slug: "kb" }], nextCursor: null });
  await expect(
    store.knowledge.listKnowledgeBases(tenant, { limit: 2, cursor: "garbage" }),
  ).rejects.toMatchObject({
    code: "invalid",
  });
  expect(await store.knowledge.getKnowledgeBase("00000000-0000-4000-8000-00000000000b", "kb")).toBeNull();
});

test("keyword search honours the limit and the filter, and only ready chunks count", async () => {
  const pending = newDocument();
  await store.knowledge.addDocument(pending);
  const tagged = newDocument({ metadata: { lang: ["en", "de"] } });
  await store.knowledge.addDocument(tagged);
  await store.knowledge.claimDocument("a", lease(), clock.now());
  await store.knowledge.claimDocument("a", lease(), clock.now());
  await complete(tagged.id, "a", ["cat cat", "cat dog", "dog"]);
  expect(await store.knowledge.keywordSearch(base.id, "cat", 1)).toEqual([
    { chunkId: expect.any(String), score: 2 },
  ]);
  expect(await store.knowledge.keywordSearch(base.id, "cat", 10, { lang: "de" })).toHaveLength(2);
  expect(await store.knowledge.keywordSearch(base.id, "cat", 10, { lang: "fr" })).toEqual([]);
  expect(await store.knowledge.matchingDocumentIds(base.id, { lang: { in: ["en"] } })).toEqual([tagged.id]);
  // The other document (claimed, unfinished) has no chunks to find.
  expect((await store.knowledge.loadVectors(base.id)).chunkIds).toHaveLength(3);
});
