/**
 * The KnowledgeStore port (packages/core/src/knowledge/ports.ts, docs/KNOWLEDGE.md "Storage"):
 * knowledge bases, documents, the ingestion queue and search, on every store.
 */
import { beforeEach, expect, test } from "bun:test";
import type { MetadataFilter } from "@promptrun/contract";
import type { DocumentRecord, KnowledgeBaseRecord, TenantRecord } from "@promptrun/core";
import { addTenant, at } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";
import {
  addReady,
  chunksOf,
  knowledgeBase,
  newDocument,
  outboxTo,
  unitVector,
} from "./knowledge-fixtures.ts";

export const knowledgeConformance = (context: ConformanceContext): void => {
  const { store } = context;
  const kb = () => store().knowledge;
  let acme: TenantRecord;
  let docs: KnowledgeBaseRecord;
  beforeEach(async () => {
    acme = await addTenant(store(), "acme");
    docs = knowledgeBase(acme.id, "docs");
    await kb().createKnowledgeBase(docs);
  });

  test("a knowledge base reads back with its counts; an unknown slug is null", async () => {
    expect(await kb().getKnowledgeBase(acme.id, "docs")).toEqual({
      ...docs,
      documentCount: 0,
      chunkCount: 0,
      bytes: 0,
    });
    await addReady(store(), docs, ["alpha beta", "gamma"], { bytes: 100 });
    await kb().addDocument(newDocument(docs, { bytes: 50, createdAt: at(5) }));
    expect(await kb().getKnowledgeBase(acme.id, "docs")).toMatchObject({
      documentCount: 2,
      chunkCount: 2,
      bytes: 150,
    });
    expect(await kb().getKnowledgeBase(acme.id, "nope")).toBeNull();
  });

  test("a taken slug is a conflict within a tenant, free in another", async () => {
    await expect(kb().createKnowledgeBase(knowledgeBase(acme.id, "docs"))).rejects.toMatchObject({
      code: "conflict",
    });
    const globex = await addTenant(store(), "globex");
    await kb().createKnowledgeBase(knowledgeBase(globex.id, "docs"));
    expect((await kb().getKnowledgeBase(globex.id, "docs"))?.tenantId).toBe(globex.id);
  });

  test("another tenant sees none of it", async () => {
    const globex = await addTenant(store(), "globex");
    const { document } = await addReady(store(), docs, ["secret words"]);
    expect(await kb().getKnowledgeBase(globex.id, "docs")).toBeNull();
    expect((await kb().listKnowledgeBases(globex.id, { limit: 10 })).items).toEqual([]);
    expect(await kb().getDocument(globex.id, docs.id, document.id)).toBeNull();
    expect((await kb().listDocuments(globex.id, docs.id, { limit: 10 })).items).toEqual([]);
    expect(await kb().deleteDocument(globex.id, docs.id, document.id)).toBe(false);
    expect(await kb().deleteKnowledgeBase(globex.id, "docs")).toBe(false);
    expect(await kb().getDocument(acme.id, docs.id, document.id)).not.toBeNull();
  });

  test("knowledge bases list in slug order with a keyset cursor; a bad cursor is invalid", async () => {
    for (const slug of ["c-kb", "a-kb", "b-kb"]) await kb().createKnowledgeBase(knowledgeBase(acme.id, slug));
    const first = await kb().listKnowledgeBases(acme.id, { limit: 2 });
    expect(first.items.map((base) => base.slug)).toEqual(["a-kb", "b-kb"]);
    const second = await kb().listKnowledgeBases(acme.id, { cursor: first.nextCursor, limit: 2 });
    expect(second.items.map((base) => base.slug)).toEqual(["c-kb", "docs"]);
    expect(second.nextCursor).toBeNull();
    await expect(kb().listKnowledgeBases(acme.id, { cursor: "garbage", limit: 2 })).rejects.toMatchObject({
      code: "invalid",
    });
  });

  test("a document reads back pending with its fields; documents list newest first by pages and status", async () => {
    const added = [1, 2, 3].map((second) =>
      newDocument(docs, {
        createdAt: at(second),
        filename: `f${second}.md`,
        metadata: { n: String(second) },
      }),
    );
    for (const document of added) expect(await kb().addDocument(document)).toEqual({ replaced: [] });
    const { content: _content, ...first } = added[0]!;
    expect(await kb().getDocument(acme.id, docs.id, first.id)).toEqual({
      ...first,
      status: "pending",
      error: null,
      chunkCount: 0,
      tokens: 0,
      cost: null,
      attempts: 0,
      readyAt: null,
    });
    const page1 = await kb().listDocuments(acme.id, docs.id, { limit: 2 });
    expect(page1.items.map((document) => document.filename)).toEqual(["f3.md", "f2.md"]);
    const page2 = await kb().listDocuments(acme.id, docs.id, { cursor: page1.nextCursor, limit: 2 });
    expect(page2.items.map((document) => document.filename)).toEqual(["f1.md"]);
    expect(page2.nextCursor).toBeNull();
    expect((await kb().listDocuments(acme.id, docs.id, { status: "ready", limit: 10 })).items).toEqual([]);
    expect((await kb().listDocuments(acme.id, docs.id, { status: "pending", limit: 10 })).items).toHaveLength(
      3,
    );
    await expect(kb().listDocuments(acme.id, docs.id, { cursor: "%%", limit: 2 })).rejects.toMatchObject({
      code: "invalid",
    });
  });

  test("a document is deleted once; its chunks leave the keyword and vector results", async () => {
    const { document } = await addReady(store(), docs, ["walrus tusks", "walrus diet"]);
    const before = await kb().vectorGeneration(docs.id);
    expect(await kb().deleteDocument(acme.id, docs.id, document.id)).toBe(true);
    expect(await kb().deleteDocument(acme.id, docs.id, document.id)).toBe(false);
    expect(await kb().getDocument(acme.id, docs.id, document.id)).toBeNull();
    expect(await kb().keywordSearch(docs.id, "walrus", 10)).toEqual([]);
    expect((await kb().loadVectors(docs.id)).chunkIds).toEqual([]);
    expect(await kb().vectorGeneration(docs.id)).not.toBe(before);
    const rest = await context.knowledgeAtRest();
    if (rest) expect(rest.rows).toMatchObject({ kb_documents: 0, kb_chunks: 0 });
  });

  claimConformance(context, () => docs);
  searchConformance(context, () => docs);
};

const OWNER = "instance-a";
const OTHER = "instance-b";

/** The durable ingestion queue: claims, leases, complete and fail. */
const claimConformance = (context: ConformanceContext, base: () => KnowledgeBaseRecord): void => {
  const { store } = context;
  const kb = () => store().knowledge;

  test("claims take the oldest waiting document with its upload and knowledge base, each once", async () => {
    const later = newDocument(base(), { createdAt: at(2) });
    const older = newDocument(base(), { createdAt: at(1), content: new Uint8Array([1, 2, 3]) });
    await kb().addDocument(later);
    await kb().addDocument(older);
    const first = await kb().claimDocument(OWNER, at(40), at(10));
    expect(first?.document).toMatchObject({ id: older.id, status: "processing", attempts: 1 });
    expect(first?.content).toEqual(new Uint8Array([1, 2, 3]));
    expect(first?.knowledgeBase).toEqual(base());
    expect((await kb().claimDocument(OTHER, at(40), at(10)))?.document.id).toBe(later.id);
    expect(await kb().claimDocument(OTHER, at(40), at(10))).toBeNull();
  });

  test("concurrent claims never hand out one document twice", async () => {
    const added = [1, 2, 3].map((second) => newDocument(base(), { createdAt: at(second) }));
    for (const document of added) await kb().addDocument(document);
    const claims = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) => kb().claimDocument(`instance-${n}`, at(40), at(10))),
    );
    const ids = claims.flatMap((claim) => (claim ? [claim.document.id] : []));
    expect(ids.toSorted()).toEqual(added.map((document) => document.id).toSorted());
  });

  test("an expired lease is taken over; the old owner can then neither renew nor complete", async () => {
    const document = newDocument(base());
    await kb().addDocument(document);
    await kb().claimDocument(OWNER, at(40), at(10));
    expect(await kb().claimDocument(OTHER, at(70), at(39))).toBeNull();
    expect(await kb().renewDocumentLease(document.id, OWNER, at(60))).toBe(true);
    expect(await kb().claimDocument(OTHER, at(70), at(59))).toBeNull();
    const taken = await kb().claimDocument(OTHER, at(90), at(60));
    expect(taken?.document).toMatchObject({ id: document.id, attempts: 2 });
    expect(await kb().renewDocumentLease(document.id, OWNER, at(100))).toBe(false);
    const outbox = outboxTo(() => null);
    const late = await kb().completeDocument(document.id, OWNER, {
      chunks: chunksOf(["stale chunk"]).map((chunk) => ({ ...chunk, documentId: document.id })),
      tokens: 2,
      cost: { total: 0, priced: true },
      readyAt: at(61),
      outbox: outbox.build,
    });
    expect(late).toBeNull();
    expect(outbox.seen).toEqual([]);
    expect(await kb().keywordSearch(base().id, "stale", 10)).toEqual([]);
    expect(await kb().getDocument(base().tenantId, base().id, document.id)).toMatchObject({
      status: "processing",
      chunkCount: 0,
    });
    expect(
      await kb().failDocument(document.id, OWNER, {
        error: "x",
        cost: null,
        at: at(62),
        outbox: outbox.build,
      }),
    ).toBeNull();
  });

  test("complete writes the chunks, counts and cost, drops the upload, and writes the outbox rows", async () => {
    const webhookId = await addWebhook(context, base().tenantId);
    const document = newDocument(base(), { externalId: "guide" });
    await kb().addDocument(document);
    await kb().claimDocument(OWNER, at(40), at(10));
    const outbox = outboxTo(() => webhookId);
    const chunks = chunksOf(["one two", "three"]).map((chunk) => ({ ...chunk, documentId: document.id }));
    const ready = await kb().completeDocument(document.id, OWNER, {
      chunks,
      tokens: 3,
      cost: { total: 0.25, priced: false },
      readyAt: at(20),
      outbox: outbox.build,
    });
    const { content: _content, ...fields } = document;
    const expected: DocumentRecord = {
      ...fields,
      status: "ready",
      error: null,
      chunkCount: 2,
      tokens: 3,
      cost: { total: 0.25, priced: false },
      attempts: 1,
      readyAt: at(20),
    };
    expect(ready).toEqual(expected);
    expect(outbox.seen).toEqual([expected]);
    expect(await kb().getDocument(base().tenantId, base().id, document.id)).toEqual(expected);
    expect(await kb().getChunks(base().id, [chunks[1]!.id])).toEqual([
      { chunkId: chunks[1]!.id, documentId: document.id, filename: "guide.md", text: "three", metadata: {} },
    ]);
    expect(await store().webhooks.getEventPayload(outbox.eventId)).toContain('"status":"ready"');
    expect((await store().webhooks.dueDeliveries(at(5), 10)).map((row) => row.eventType)).toEqual([
      "document.ready",
    ]);
    expect(await kb().renewDocumentLease(document.id, OWNER, at(50))).toBe(false);
    expect(await kb().claimDocument(OTHER, at(900), at(800))).toBeNull();
    expect((await context.knowledgeAtRest())?.contents ?? 0).toBe(0);
  });

  test("fail ends the document failed with the error and the outbox rows; the upload is dropped", async () => {
    const webhookId = await addWebhook(context, base().tenantId);
    const document = newDocument(base());
    await kb().addDocument(document);
    await kb().claimDocument(OWNER, at(40), at(10));
    const outbox = outboxTo(() => webhookId);
    const failed = await kb().failDocument(document.id, OWNER, {
      error: "the PDF has no text layer (a scan?)",
      cost: null,
      at: at(11),
      outbox: outbox.build,
    });
    expect(failed).toMatchObject({
      status: "failed",
      error: "the PDF has no text layer (a scan?)",
      chunkCount: 0,
    });
    expect(outbox.seen.map((seen) => seen.status)).toEqual(["failed"]);
    expect(await store().webhooks.getEventPayload(outbox.eventId)).toContain('"status":"failed"');
    expect(await kb().claimDocument(OTHER, at(900), at(800))).toBeNull();
    expect((await context.knowledgeAtRest())?.contents ?? 0).toBe(0);
  });

  test("complete after the document was deleted writes nothing", async () => {
    const document = newDocument(base());
    await kb().addDocument(document);
    await kb().claimDocument(OWNER, at(40), at(10));
    await kb().deleteDocument(base().tenantId, base().id, document.id);
    const outbox = outboxTo(() => null);
    const completed = await kb().completeDocument(document.id, OWNER, {
      chunks: chunksOf(["orphan chunk"]).map((chunk) => ({ ...chunk, documentId: document.id })),
      tokens: 2,
      cost: { total: 0, priced: true },
      readyAt: at(11),
      outbox: outbox.build,
    });
    expect(completed).toBeNull();
    expect(outbox.seen).toEqual([]);
    expect(await kb().keywordSearch(base().id, "orphan", 10)).toEqual([]);
    const rest = await context.knowledgeAtRest();
    if (rest) expect(rest.rows).toMatchObject({ kb_documents: 0, kb_chunks: 0 });
  });

  test("an outbox row that cannot be written leaves the document processing and chunkless", async () => {
    const document = newDocument(base());
    await kb().addDocument(document);
    await kb().claimDocument(OWNER, at(40), at(10));
    const outbox = outboxTo(() => Bun.randomUUIDv7());
    await expect(
      kb().completeDocument(document.id, OWNER, {
        chunks: chunksOf(["doomed chunk"]).map((chunk) => ({ ...chunk, documentId: document.id })),
        tokens: 2,
        cost: { total: 0, priced: true },
        readyAt: at(11),
        outbox: outbox.build,
      }),
    ).rejects.toThrow();
    expect(await kb().getDocument(base().tenantId, base().id, document.id)).toMatchObject({
      status: "processing",
    });
    expect(await kb().keywordSearch(base().id, "doomed", 10)).toEqual([]);
  });
};

const addWebhook = async (context: ConformanceContext, tenantId: string): Promise<string> => {
  const environment = await context
    .store()
    .environments.ensure(tenantId, "staging", Bun.randomUUIDv7(), at(0));
  const id = Bun.randomUUIDv7();
  await context.store().webhooks.create({
    id,
    tenantId,
    environmentId: environment.id,
    environment: "staging",
    url: "https://example.com/hook",
    encryptedSecret: "encrypted-whsec",
    events: ["document.ready", "document.failed"],
    enabled: true,
    failureStreak: 0,
    createdAt: at(0),
  });
  return id;
};

/** Replacement, deletion, filters, keyword search and the vectors. */
const searchConformance = (context: ConformanceContext, base: () => KnowledgeBaseRecord): void => {
  const { store } = context;
  const kb = () => store().knowledge;

  test("the same externalId replaces the document: its chunks leave the keyword and vector results", async () => {
    const old = await addReady(store(), base(), ["zebra stripes", "zebra herds"], { externalId: "animals" });
    const replacement = newDocument(base(), { externalId: "animals", createdAt: at(5) });
    expect(await kb().addDocument(replacement)).toEqual({ replaced: [old.document.id] });
    expect(await kb().getDocument(base().tenantId, base().id, old.document.id)).toBeNull();
    expect(await kb().keywordSearch(base().id, "zebra", 10)).toEqual([]);
    expect((await kb().loadVectors(base().id)).chunkIds).toEqual([]);
    expect(
      await kb().getChunks(
        base().id,
        old.chunks.map((chunk) => chunk.id),
      ),
    ).toEqual([]);
    const listed = await kb().listDocuments(base().tenantId, base().id, { limit: 10 });
    expect(listed.items.map((document) => document.id)).toEqual([replacement.id]);
  });

  test("concurrent adds of one externalId leave exactly one document", async () => {
    const adds = Array.from({ length: 8 }, (_, n) =>
      newDocument(base(), { externalId: "same", createdAt: at(n) }),
    );
    const results = await Promise.all(adds.map((document) => kb().addDocument(document)));
    const listed = await kb().listDocuments(base().tenantId, base().id, { limit: 20 });
    expect(listed.items).toHaveLength(1);
    // Each add replaced the one before it: every other document was replaced exactly once.
    const replaced = results.flatMap((result) => result.replaced);
    expect(replaced.toSorted()).toEqual(
      adds
        .map((document) => document.id)
        .filter((id) => id !== listed.items[0]!.id)
        .toSorted(),
    );
  });

  test("a document of thousands of chunks is stored whole, in ordinal order", async () => {
    const texts = Array.from(
      { length: 2_500 },
      (_, n) => `chunk number ${n} ${n === 1_234 ? "needle" : "hay"}`,
    );
    const { chunks } = await addReady(store(), base(), texts);
    const loaded = await kb().loadVectors(base().id);
    expect(loaded.chunkIds).toEqual(chunks.map((chunk) => chunk.id));
    expect(loaded.vectors.length).toBe(2_500 * 4);
    expect((await kb().keywordSearch(base().id, "needle", 5)).map((hit) => hit.chunkId)).toEqual([
      chunks[1_234]!.id,
    ]);
    expect((await kb().getKnowledgeBase(base().tenantId, base().slug))?.chunkCount).toBe(2_500);
  });

  test("deleting a knowledge base deletes its documents, chunks and keyword index rows", async () => {
    const other = knowledgeBase(base().tenantId, "other");
    await kb().createKnowledgeBase(other);
    await addReady(store(), base(), ["otter den", "otter food"]);
    await addReady(store(), other, ["heron nest"]);
    await kb().addDocument(newDocument(base(), { createdAt: at(9) }));
    expect(await kb().deleteKnowledgeBase(base().tenantId, base().slug)).toBe(true);
    expect(await kb().deleteKnowledgeBase(base().tenantId, base().slug)).toBe(false);
    expect(await kb().getKnowledgeBase(base().tenantId, base().slug)).toBeNull();
    expect(await kb().keywordSearch(base().id, "otter", 10)).toEqual([]);
    expect((await kb().loadVectors(base().id)).chunkIds).toEqual([]);
    expect(await kb().keywordSearch(other.id, "heron", 10)).toHaveLength(1);
    const rest = await context.knowledgeAtRest();
    if (rest) {
      expect(rest.rows).toMatchObject({ knowledge_bases: 1, kb_documents: 1, kb_chunks: 1 });
      expect(await kb().deleteKnowledgeBase(base().tenantId, "other")).toBe(true);
      const empty = await context.knowledgeAtRest();
      for (const [table, rows] of Object.entries(empty?.rows ?? {}))
        expect([table, rows]).toEqual([table, 0]);
    }
  });

  test("a metadata filter matches equal values, arrays holding them, and `in`; every key must match", async () => {
    const en = await addReady(store(), base(), ["tea kettle"], { metadata: { lang: "en", team: "a" } });
    const both = await addReady(store(), base(), ["tea leaves"], {
      metadata: { lang: ["en", "fr"], team: "b" },
      createdAt: at(2),
    });
    const de = await addReady(store(), base(), ["tea garden"], {
      metadata: { lang: "de" },
      createdAt: at(3),
    });
    const ids = async (filter: MetadataFilter) =>
      (await kb().matchingDocumentIds(base().id, filter)).toSorted();
    expect(await ids({ lang: "en" })).toEqual([en.document.id, both.document.id].toSorted());
    expect(await ids({ lang: { in: ["de", "fr"] } })).toEqual([both.document.id, de.document.id].toSorted());
    expect(await ids({ lang: "en", team: "b" })).toEqual([both.document.id]);
    expect(await ids({ missing: "x" })).toEqual([]);
    const hits = await kb().keywordSearch(base().id, "tea", 10, { lang: "fr" });
    expect(hits.map((hit) => hit.chunkId)).toEqual([both.chunks[0]!.id]);
    expect(await kb().keywordSearch(base().id, "tea", 10, { lang: "xx" })).toEqual([]);
  });

  test("keyword search ranks the chunk with the words first, any word matching, within the limit", async () => {
    const { chunks } = await addReady(store(), base(), [
      "the weather report says rain",
      "solar panels convert sunlight into electricity efficiently",
      "electricity prices rise",
      "cooking pasta at home",
    ]);
    const hits = await kb().keywordSearch(base().id, "solar electricity sunlight", 10);
    expect(hits[0]?.chunkId).toBe(chunks[1]!.id);
    expect(hits.map((hit) => hit.chunkId)).toContain(chunks[2]!.id);
    expect(hits.map((hit) => hit.chunkId)).not.toContain(chunks[3]!.id);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(await kb().keywordSearch(base().id, "solar electricity", 1)).toHaveLength(1);
    expect(await kb().keywordSearch(base().id, "nothing matches here", 10)).toEqual([]);
  });

  test("keyword search never throws on query syntax", async () => {
    await addReady(store(), base(), ['quotes " and (parens) AND OR NOT near']);
    for (const query of [
      '"',
      "AND OR (",
      "*",
      "NEAR(",
      "'",
      "-",
      "",
      ":",
      "^",
      "a:b",
      "!!",
      "\\",
      "OR",
      "x & y | !z <->",
    ])
      expect(Array.isArray(await kb().keywordSearch(base().id, query, 5))).toBe(true);
    expect(await kb().keywordSearch(base().id, 'parens"', 5)).toHaveLength(1);
  });

  test("only chunks of ready documents are searchable", async () => {
    await addReady(store(), base(), ["lighthouse keeper"]);
    const waiting = newDocument(base(), { createdAt: at(9) });
    await kb().addDocument(waiting);
    await kb().claimDocument(OWNER, at(40), at(10));
    expect(await kb().keywordSearch(base().id, "lighthouse", 10)).toHaveLength(1);
    expect((await kb().loadVectors(base().id)).chunkIds).toHaveLength(1);
  });

  test("loadVectors returns every ready chunk's vector exactly, in a stable order, with the generation", async () => {
    const first = await addReady(store(), base(), ["a", "b", "c"]);
    const second = await addReady(store(), base(), ["d"], { createdAt: at(2) });
    const loaded = await kb().loadVectors(base().id);
    expect(loaded.dimensions).toBe(4);
    expect(loaded.generation).toBe(await kb().vectorGeneration(base().id));
    const byId = new Map([...first.chunks, ...second.chunks].map((chunk) => [chunk.id, chunk]));
    expect(loaded.chunkIds.toSorted()).toEqual([...byId.keys()].toSorted());
    loaded.chunkIds.forEach((id, row) => {
      expect(loaded.documentIds[row]).toBe(byId.get(id)!.documentId);
      expect(loaded.vectors.slice(row * 4, row * 4 + 4)).toEqual(
        byId.get(id)!.embedding as Float32Array<ArrayBuffer>,
      );
    });
    expect((await kb().loadVectors(base().id)).chunkIds).toEqual(loaded.chunkIds);
    expect(loaded.vectors[0]).toBeCloseTo(unitVector(0)[0]!, 6);
  });

  test("the vector generation changes when chunks appear or disappear", async () => {
    const start = await kb().vectorGeneration(base().id);
    const { document } = await addReady(store(), base(), ["x"]);
    const afterAdd = await kb().vectorGeneration(base().id);
    expect(afterAdd).not.toBe(start);
    await kb().addDocument(newDocument(base(), { createdAt: at(4) }));
    await kb().deleteDocument(base().tenantId, base().id, document.id);
    const afterDelete = await kb().vectorGeneration(base().id);
    expect(afterDelete).not.toBe(afterAdd);
    expect((await kb().loadVectors(base().id)).generation).toBe(afterDelete);
  });

  test("getChunks hydrates with filename and metadata, only for that knowledge base's chunks", async () => {
    const { document, chunks } = await addReady(store(), base(), ["first part", "second part"], {
      filename: "manual.pdf",
      mediaType: "application/pdf",
      metadata: { product: ["x", "y"] },
    });
    const found = await kb().getChunks(base().id, [chunks[0]!.id, Bun.randomUUIDv7(), chunks[1]!.id]);
    expect(found.toSorted((a, b) => a.text.localeCompare(b.text))).toEqual([
      {
        chunkId: chunks[0]!.id,
        documentId: document.id,
        filename: "manual.pdf",
        text: "first part",
        metadata: { product: ["x", "y"] },
      },
      {
        chunkId: chunks[1]!.id,
        documentId: document.id,
        filename: "manual.pdf",
        text: "second part",
        metadata: { product: ["x", "y"] },
      },
    ]);
    const other = knowledgeBase(base().tenantId, "elsewhere");
    await kb().createKnowledgeBase(other);
    expect(await kb().getChunks(other.id, [chunks[0]!.id])).toEqual([]);
    expect(await kb().getChunks(base().id, [])).toEqual([]);
  });
};
