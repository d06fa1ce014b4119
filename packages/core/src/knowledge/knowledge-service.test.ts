import { beforeEach, expect, test } from "bun:test";
import { knowledgeBaseSchema, knowledgeDocumentSchema } from "@promptrun/contract";
import type { PromptrunError } from "../errors.ts";
import type { Store } from "../ports.ts";
import { createTokenBucketRateLimiter } from "../rate-limit/token-bucket.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import type { KnowledgeService } from "../services.ts";
import { addTenant, createMemoryStore, createTestConfig, manualClock } from "../testing/index.ts";
import { createKnowledgeService } from "./knowledge-service.ts";
import { bagOfWords, fakeDetectMediaType, fakeResolver, utf8 } from "./knowledge-test-support.ts";
import { createKnowledgeSearch } from "./search.ts";
import { createVectorIndex } from "./vector-index.ts";

const tenant = "00000000-0000-4000-8000-00000000000a";
const other = "00000000-0000-4000-8000-00000000000b";
const clock = manualClock();
const config = createTestConfig();
config.knowledge = { ...config.knowledge, maxUploadBytes: 1_000 };

let store: Store;
let service: KnowledgeService;
let wakes = 0;

beforeEach(async () => {
  store = createMemoryStore({ clock });
  await addTenant(store, "acme", tenant);
  await addTenant(store, "other", other);
  const resolve = fakeResolver();
  wakes = 0;
  service = createKnowledgeService({
    store: store.knowledge,
    config,
    clock,
    search: createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: resolve }),
    validateEmbeddingModel: (ref) => {
      resolve(ref);
    },
    detectMediaType: fakeDetectMediaType,
    onDocumentAdded: () => wakes++,
  });
  await service.create(tenant, { slug: "docs" });
});

/** The PromptrunError a call rejects with (fails the test when it resolves). */
const failure = async (call: Promise<unknown>): Promise<PromptrunError> => {
  try {
    await call;
  } catch (error) {
    return error as PromptrunError;
  }
  throw new Error("expected the call to fail");
};

test("create defaults the embedding model and chunking and presents the contract's shape", async () => {
  const created = await service.create(tenant, { slug: "handbook", description: "HR" });
  expect(knowledgeBaseSchema.parse(created)).toEqual(created);
  expect(created).toMatchObject({
    slug: "handbook",
    description: "HR",
    embeddingModel: "dev:hash",
    chunking: { maxTokens: 512, overlap: 64 },
    documentCount: 0,
    createdAt: clock.now().toISOString(),
  });
  expect(await service.get(tenant, "handbook")).toEqual(created);
  expect((await service.list(tenant, { limit: 10 })).items.map((base) => base.slug)).toEqual([
    "docs",
    "handbook",
  ]);
});

test("create refuses a taken slug (409), a bad body (400) and an unknown embedding model (400)", async () => {
  const taken = await failure(service.create(tenant, { slug: "docs" }));
  expect(taken.code).toBe("conflict");
  expect(taken.message).toContain("'docs' already exists");
  // Slugs are per tenant.
  expect((await service.create(other, { slug: "docs" })).slug).toBe("docs");

  const unknownField = await failure(service.create(tenant, { slug: "x", color: "red" }));
  expect(unknownField.code).toBe("invalid");
  expect(unknownField.message).toContain("color");
  const overlap = await failure(
    service.create(tenant, { slug: "x", chunking: { maxTokens: 100, overlap: 80 } }),
  );
  expect(overlap.message).toContain("50 %");
  const model = await failure(service.create(tenant, { slug: "x", embeddingModel: "nope:model" }));
  expect(model.code).toBe("invalid");
  expect(model.message).toBe("embeddingModel: unknown embedding provider 'nope'");
});

test("another tenant's knowledge base is not_found everywhere", async () => {
  const added = await service.addDocument(tenant, "docs", { content: utf8("hello"), filename: "a.txt" });
  const calls = [
    service.get(other, "docs"),
    service.delete(other, "docs"),
    service.addDocument(other, "docs", { content: utf8("x"), filename: "a.txt" }),
    service.listDocuments(other, "docs", { limit: 10 }),
    service.getDocument(other, "docs", added.id),
    service.deleteDocument(other, "docs", added.id),
    service.search(other, "docs", { query: "hello" }),
  ];
  for (const call of calls) expect((await failure(call)).code).toBe("not_found");
  // The other tenant's own knowledge base of that slug does not see the document either.
  await service.create(other, { slug: "docs" });
  expect((await failure(service.getDocument(other, "docs", added.id))).code).toBe("not_found");
  expect((await service.getDocument(tenant, "docs", added.id)).status).toBe("pending");
});

test("addDocument stores a pending document, wakes the worker and presents it", async () => {
  const accepted = await service.addDocument(tenant, "docs", {
    content: utf8("# Title\n\nBody"),
    filename: "guide.md",
    metadata: '{"team": "support", "tags": ["a", "b"]}',
    externalId: "guide-1",
  });
  expect(accepted).toEqual({ id: expect.any(String), status: "pending" });
  expect(wakes).toBe(1);
  const document = await service.getDocument(tenant, "docs", accepted.id);
  expect(knowledgeDocumentSchema.parse(document)).toEqual(document);
  expect(document).toMatchObject({
    knowledgeBase: "docs",
    externalId: "guide-1",
    filename: "guide.md",
    mediaType: "text/markdown",
    metadata: { team: "support", tags: ["a", "b"] },
    status: "pending",
    bytes: 13,
    chunkCount: 0,
    cost: null,
    readyAt: null,
  });
  const base = await service.get(tenant, "docs");
  expect(base).toMatchObject({ documentCount: 1, bytes: 13 });
});

test("addDocument: 413 over the limit, 400 empty or bad fields, 415 unsupported or lying types", async () => {
  const add = (upload: Parameters<KnowledgeService["addDocument"]>[2]) =>
    failure(service.addDocument(tenant, "docs", upload));
  const big = await add({ content: new Uint8Array(1_001), filename: "a.txt" });
  expect(big.code).toBe("payload_too_large");
  expect(big.message).toContain("1001 bytes, more than the limit of 1000");
  expect((await add({ content: new Uint8Array(0), filename: "a.txt" })).message).toContain("empty");
  expect((await add({ content: utf8("x"), filename: "../etc/passwd" })).message).toBe(
    "filename: must be a file name, not a path",
  );
  expect((await add({ content: utf8("x"), filename: 42 })).code).toBe("invalid");
  expect((await add({ content: utf8("x"), filename: "a.txt", metadata: "{not json" })).message).toContain(
    "metadata must be a JSON object",
  );
  expect((await add({ content: utf8("x"), filename: "a.txt", metadata: { n: 5 } })).message).toContain(
    "metadata.n",
  );
  expect((await add({ content: utf8("x"), filename: "a.txt", externalId: "" })).message).toContain(
    "externalId",
  );
  const exe = await add({ content: utf8("MZ"), filename: "tool.exe" });
  expect(exe.code).toBe("unsupported_media_type");
  expect(exe.message).toContain("'tool.exe' is not a supported document type");
  // A .pdf that is not one (the extension lies).
  expect((await add({ content: utf8("plain text"), filename: "report.pdf" })).code).toBe(
    "unsupported_media_type",
  );
  expect((await add({ content: utf8("x"), filename: "a.txt", mediaType: "image/png" })).code).toBe(
    "unsupported_media_type",
  );
  expect(wakes).toBe(0);
  expect((await service.listDocuments(tenant, "docs", { limit: 10 })).items).toEqual([]);
});

test("the declared type is normalised: parameters and case dropped, octet-stream means undeclared", async () => {
  const add = (filename: string, mediaType: string) =>
    service.addDocument(tenant, "docs", { content: utf8("# x"), filename, mediaType });
  const markdown = await add("a.md", "Text/Markdown; charset=UTF-8");
  expect((await service.getDocument(tenant, "docs", markdown.id)).mediaType).toBe("text/markdown");
  const unknown = await add("b.md", "application/octet-stream");
  expect((await service.getDocument(tenant, "docs", unknown.id)).mediaType).toBe("text/markdown");
});

test("a document at exactly the limit is accepted", async () => {
  const accepted = await service.addDocument(tenant, "docs", {
    content: new Uint8Array(1_000).fill(65),
    filename: "a.txt",
  });
  expect(accepted.status).toBe("pending");
});

test("the same externalId replaces the document; list, delete and unknown ids", async () => {
  const first = await service.addDocument(tenant, "docs", {
    content: utf8("v1"),
    filename: "a.txt",
    externalId: "a",
  });
  clock.advance(1);
  const second = await service.addDocument(tenant, "docs", {
    content: utf8("v2"),
    filename: "a.txt",
    externalId: "a",
  });
  clock.advance(1);
  const third = await service.addDocument(tenant, "docs", { content: utf8("other"), filename: "b.txt" });
  const listed = await service.listDocuments(tenant, "docs", { limit: 10 });
  expect(listed.items.map((document) => document.id)).toEqual([third.id, second.id]);
  expect((await failure(service.getDocument(tenant, "docs", first.id))).code).toBe("not_found");
  const paged = await service.listDocuments(tenant, "docs", { limit: 1 });
  expect(paged.items.map((document) => document.id)).toEqual([third.id]);
  const next = await service.listDocuments(tenant, "docs", { limit: 1, cursor: paged.nextCursor });
  expect(next.items.map((document) => document.id)).toEqual([second.id]);
  expect((await service.listDocuments(tenant, "docs", { limit: 10, status: "ready" })).items).toEqual([]);

  await service.deleteDocument(tenant, "docs", second.id);
  expect((await failure(service.deleteDocument(tenant, "docs", second.id))).code).toBe("not_found");
  expect((await failure(service.getDocument(tenant, "docs", "not-a-uuid"))).code).toBe("not_found");
  await service.delete(tenant, "docs");
  expect((await failure(service.get(tenant, "docs"))).code).toBe("not_found");
  expect((await failure(service.delete(tenant, "docs"))).code).toBe("not_found");
});

test("search: topK 10000 is a clear 400, a bad mode 400, an unknown knowledge base 404", async () => {
  const huge = await failure(service.search(tenant, "docs", { query: "x", topK: 10_000 }));
  expect(huge.code).toBe("invalid");
  expect(huge.message).toBe("topK must be a whole number from 1 to 50; ask for fewer chunks");
  expect((await failure(service.search(tenant, "docs", { query: "x", mode: "fuzzy" }))).code).toBe("invalid");
  expect((await failure(service.search(tenant, "docs", { query: "" }))).code).toBe("invalid");
  expect((await failure(service.search(tenant, "nope", { query: "x" }))).code).toBe("not_found");
  expect(await service.search(tenant, "docs", { query: "anything", topK: 50 })).toEqual({ items: [] });
});

test("deleting a knowledge base drops its vectors from the search's memory at once", async () => {
  const index = createVectorIndex({ store: store.knowledge });
  const search = createKnowledgeSearch({
    store: store.knowledge,
    resolveEmbeddingModel: fakeResolver(),
    vectorIndex: index,
  });
  const own = createKnowledgeService({
    store: store.knowledge,
    config,
    clock,
    search,
    validateEmbeddingModel: () => {},
    detectMediaType: fakeDetectMediaType,
    onKnowledgeBaseDeleted: (id) => search.forget(id),
  });
  const { id } = await own.addDocument(tenant, "docs", { content: utf8("x"), filename: "a.txt" });
  await store.knowledge.claimDocument("w", new Date(clock.now().getTime() + 30_000), clock.now());
  await store.knowledge.completeDocument(id, "w", {
    chunks: [
      { id: uuidv7(), documentId: id, ordinal: 0, text: "hello", tokens: 1, embedding: bagOfWords("hello") },
    ],
    tokens: 1,
    cost: { total: 0, priced: true },
    readyAt: clock.now(),
    outbox: () => [],
  });
  expect((await own.search(tenant, "docs", { query: "hello", mode: "vector" })).items).toHaveLength(1);
  expect(index.bytes()).toBeGreaterThan(0);
  await own.delete(tenant, "docs");
  expect(index.bytes()).toBe(0);
});

test("uploads and searches take from the tenant's own buckets: past the burst, rate_limited; runs' buckets untouched", async () => {
  const rateLimits = createTokenBucketRateLimiter({ rateLimit: { perSecond: 1, burst: 2 }, clock });
  const limited = createKnowledgeService({
    store: store.knowledge,
    config,
    clock,
    search: createKnowledgeSearch({ store: store.knowledge, resolveEmbeddingModel: fakeResolver() }),
    validateEmbeddingModel: () => {},
    detectMediaType: fakeDetectMediaType,
    rateLimits,
  });
  const upload = (n: number) => ({ content: utf8(`note ${n}`), filename: `note-${n}.txt` });
  await limited.addDocument(tenant, "docs", upload(1));
  await limited.addDocument(tenant, "docs", upload(2));
  const refused = await failure(limited.addDocument(tenant, "docs", upload(3)));
  expect({ code: refused.code, retryAfter: refused.retryAfterSeconds }).toEqual({
    code: "rate_limited",
    retryAfter: 1,
  });
  // Searches have their own bucket, and another tenant's are its own.
  await limited.search(tenant, "docs", { query: "note" });
  await limited.search(tenant, "docs", { query: "note" });
  expect((await failure(limited.search(tenant, "docs", { query: "note" }))).code).toBe("rate_limited");
  expect(rateLimits.state(tenant, "runs.create").remaining).toBe(2);
  await limited.create(other, { slug: "docs" });
  await limited.search(other, "docs", { query: "note" });
  // Nothing of a refused upload is stored.
  const listed = await limited.listDocuments(tenant, "docs", { limit: 50 });
  expect(listed.items.map((document) => document.filename).toSorted()).toEqual(["note-1.txt", "note-2.txt"]);
});
