import type { Metadata, MetadataFilter } from "@promptrun/contract";
import { conflict } from "../../errors.ts";
import type {
  ChunkRecord,
  DocumentRecord,
  KnowledgeBaseRecord,
  KnowledgeBaseView,
  KnowledgeStore,
} from "../../knowledge/ports.ts";
import type { WebhookDeliveryRecord } from "../../ports.ts";
import { copy, isString, isTimeAndId, paginate } from "./paging.ts";
import { duplicate, type MemoryReferences, requireReference } from "./references.ts";

interface StoredDocument {
  record: DocumentRecord;
  /** The upload, until ready or failed. */
  content: Uint8Array | null;
  lease: { owner: string; until: Date } | null;
}

/** Outbox rows go through the webhook part, like the SQL stores' one transaction. */
export interface MemoryOutbox {
  check(deliveries: WebhookDeliveryRecord[]): void;
  insert(deliveries: WebhookDeliveryRecord[]): void;
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Oldest first: the order the queue claims in. */
const oldestFirst = (a: DocumentRecord, b: DocumentRecord) =>
  a.createdAt.getTime() - b.createdAt.getTime() || byId(a.id, b.id);
const newestFirst = (a: DocumentRecord, b: DocumentRecord) => oldestFirst(b, a);

/** Lower-cased words (letters and digits), the memory store's stand-in for FTS5 / tsvector. */
export const keywordTerms = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** docs/KNOWLEDGE.md "Search": a key's string matches an equal value or an array holding it; `in` matches any. */
export function metadataMatches(metadata: Metadata, filter: MetadataFilter): boolean {
  return Object.entries(filter).every(([key, condition]) => {
    if (!Object.hasOwn(metadata, key)) return false;
    const value = metadata[key];
    const wanted = typeof condition === "string" ? [condition] : condition.in;
    const present = Array.isArray(value) ? value : [value];
    return present.some((item) => wanted.includes(item as string));
  });
}

/**
 * The KnowledgeStore port in memory: the reference semantics the SQL stores' conformance suite
 * checks (ports.ts). Keyword search scores a chunk by how often the query's words occur in it
 * (any word may match); the generation counter moves on every chunk added or removed.
 */
export function createMemoryKnowledgeStore(
  references: MemoryReferences,
  outbox: MemoryOutbox,
): KnowledgeStore {
  const bases = new Map<string, KnowledgeBaseRecord>();
  const documents = new Map<string, StoredDocument>();
  /** documentId → its chunks (ordinal order), written only when the document turns ready. */
  const chunks = new Map<string, ChunkRecord[]>();
  const generations = new Map<string, number>();
  let generationCounter = 0;

  const bump = (knowledgeBaseId: string) => {
    generationCounter++;
    generations.set(knowledgeBaseId, generationCounter);
  };
  const baseBySlug = (tenantId: string, slug: string) =>
    [...bases.values()].find((base) => base.tenantId === tenantId && base.slug === slug);
  const documentsOf = (knowledgeBaseId: string) =>
    [...documents.values()].filter((stored) => stored.record.knowledgeBaseId === knowledgeBaseId);
  const view = (base: KnowledgeBaseRecord): KnowledgeBaseView => {
    const own = documentsOf(base.id);
    return {
      ...copy(base),
      documentCount: own.length,
      chunkCount: own.reduce((sum, stored) => sum + (chunks.get(stored.record.id)?.length ?? 0), 0),
      bytes: own.reduce((sum, stored) => sum + stored.record.bytes, 0),
    };
  };
  const removeDocument = (id: string) => {
    const stored = documents.get(id);
    if (!stored) return;
    documents.delete(id);
    if (chunks.delete(id)) bump(stored.record.knowledgeBaseId);
  };
  /** The document, when `owner` holds it in processing (the CAS of complete/fail). */
  const leased = (id: string, owner: string) => {
    const stored = documents.get(id);
    return stored && stored.record.status === "processing" && stored.lease?.owner === owner ? stored : null;
  };
  /** Ready chunks of the knowledge base, narrowed by the filter. */
  const readyChunks = (knowledgeBaseId: string, filter?: MetadataFilter) =>
    documentsOf(knowledgeBaseId)
      .filter((stored) => stored.record.status === "ready")
      .filter((stored) => filter === undefined || metadataMatches(stored.record.metadata, filter))
      .sort((a, b) => oldestFirst(a.record, b.record))
      .flatMap((stored) => chunks.get(stored.record.id) ?? []);

  return {
    async createKnowledgeBase(knowledgeBase) {
      if (bases.has(knowledgeBase.id)) throw duplicate(`knowledge base ${knowledgeBase.id}`);
      requireReference(references.tenant(knowledgeBase.tenantId), `knowledge base ${knowledgeBase.id}`);
      if (baseBySlug(knowledgeBase.tenantId, knowledgeBase.slug)) {
        throw conflict(`knowledge base '${knowledgeBase.slug}' already exists`);
      }
      bases.set(knowledgeBase.id, copy(knowledgeBase));
    },
    async getKnowledgeBase(tenantId, slug) {
      const base = baseBySlug(tenantId, slug);
      return base ? view(base) : null;
    },
    async listKnowledgeBases(tenantId, page) {
      const sorted = [...bases.values()]
        .filter((base) => base.tenantId === tenantId)
        .sort((a, b) => byId(a.slug, b.slug));
      const result = paginate(
        sorted,
        page,
        (base) => base.slug,
        (base, slug) => base.slug > slug,
        isString,
      );
      return { items: result.items.map(view), nextCursor: result.nextCursor };
    },
    async deleteKnowledgeBase(tenantId, slug) {
      const base = baseBySlug(tenantId, slug);
      if (!base) return false;
      for (const stored of documentsOf(base.id)) removeDocument(stored.record.id);
      bases.delete(base.id);
      bump(base.id);
      return true;
    },

    async addDocument(document) {
      if (documents.has(document.id)) throw duplicate(`document ${document.id}`);
      const base = bases.get(document.knowledgeBaseId);
      requireReference(base !== undefined && base.tenantId === document.tenantId, `document ${document.id}`);
      const replaced =
        document.externalId === null
          ? []
          : documentsOf(document.knowledgeBaseId)
              .filter((stored) => stored.record.externalId === document.externalId)
              .map((stored) => stored.record.id);
      for (const id of replaced) removeDocument(id);
      const { content, ...fields } = document;
      const record: DocumentRecord = {
        ...copy(fields),
        status: "pending",
        error: null,
        chunkCount: 0,
        tokens: 0,
        cost: null,
        attempts: 0,
        readyAt: null,
      };
      documents.set(document.id, { record, content: content.slice(), lease: null });
      return { replaced };
    },
    async getDocument(tenantId, knowledgeBaseId, id) {
      const stored = documents.get(id);
      if (
        !stored ||
        stored.record.tenantId !== tenantId ||
        stored.record.knowledgeBaseId !== knowledgeBaseId
      ) {
        return null;
      }
      return copy(stored.record);
    },
    async listDocuments(tenantId, knowledgeBaseId, page) {
      const sorted = documentsOf(knowledgeBaseId)
        .map((stored) => stored.record)
        .filter((record) => record.tenantId === tenantId)
        .filter((record) => page.status === undefined || record.status === page.status)
        .sort(newestFirst);
      const result = paginate(
        sorted,
        page,
        (record): [number, string] => [record.createdAt.getTime(), record.id],
        (record, [time, id]) =>
          record.createdAt.getTime() < time || (record.createdAt.getTime() === time && record.id < id),
        isTimeAndId,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },
    async deleteDocument(tenantId, knowledgeBaseId, id) {
      const stored = documents.get(id);
      if (
        !stored ||
        stored.record.tenantId !== tenantId ||
        stored.record.knowledgeBaseId !== knowledgeBaseId
      ) {
        return false;
      }
      removeDocument(id);
      return true;
    },

    async claimDocument(owner, leaseUntil, now) {
      const waiting = [...documents.values()]
        .filter(
          (stored) =>
            stored.record.status === "pending" ||
            (stored.record.status === "processing" &&
              (stored.lease === null || stored.lease.until.getTime() <= now.getTime())),
        )
        .sort((a, b) => oldestFirst(a.record, b.record))[0];
      if (!waiting) return null;
      const base = bases.get(waiting.record.knowledgeBaseId);
      if (!base) return null;
      waiting.record.status = "processing";
      waiting.record.attempts++;
      waiting.lease = { owner, until: new Date(leaseUntil.getTime()) };
      return {
        document: copy(waiting.record),
        content: (waiting.content ?? new Uint8Array()).slice(),
        knowledgeBase: copy(base),
      };
    },
    async renewDocumentLease(id, owner, leaseUntil) {
      const stored = leased(id, owner);
      if (!stored?.lease) return false;
      stored.lease.until = new Date(leaseUntil.getTime());
      return true;
    },
    async completeDocument(id, owner, result) {
      const stored = leased(id, owner);
      if (!stored) return null;
      const record: DocumentRecord = {
        ...copy(stored.record),
        status: "ready",
        chunkCount: result.chunks.length,
        tokens: result.tokens,
        cost: copy(result.cost),
        readyAt: new Date(result.readyAt.getTime()),
      };
      const rows = result.outbox(copy(record));
      outbox.check(rows);
      stored.record = record;
      stored.content = null;
      stored.lease = null;
      chunks.set(
        id,
        result.chunks
          .map((chunk) => ({ ...chunk, text: chunk.text, embedding: chunk.embedding.slice() }))
          .sort((a, b) => a.ordinal - b.ordinal),
      );
      bump(record.knowledgeBaseId);
      outbox.insert(rows);
      return copy(record);
    },
    async failDocument(id, owner, result) {
      const stored = leased(id, owner);
      if (!stored) return null;
      const record: DocumentRecord = {
        ...copy(stored.record),
        status: "failed",
        error: result.error,
        cost: result.cost === null ? null : copy(result.cost),
      };
      const rows = result.outbox(copy(record));
      outbox.check(rows);
      stored.record = record;
      stored.content = null;
      stored.lease = null;
      outbox.insert(rows);
      return copy(record);
    },

    async keywordSearch(knowledgeBaseId, query, limit, filter) {
      const terms = new Set(keywordTerms(query));
      if (terms.size === 0) return [];
      const scored: Array<{ chunkId: string; score: number }> = [];
      for (const chunk of readyChunks(knowledgeBaseId, filter)) {
        let score = 0;
        for (const word of keywordTerms(chunk.text)) if (terms.has(word)) score++;
        if (score > 0) scored.push({ chunkId: chunk.id, score });
      }
      // Stable sort: equal scores keep document-then-ordinal order.
      return scored.sort((a, b) => b.score - a.score).slice(0, Math.max(0, limit));
    },
    async vectorGeneration(knowledgeBaseId) {
      return String(generations.get(knowledgeBaseId) ?? 0);
    },
    async loadVectors(knowledgeBaseId) {
      const all = readyChunks(knowledgeBaseId);
      const dimensions = all[0]?.embedding.length ?? 0;
      const vectors = new Float32Array(all.length * dimensions);
      all.forEach((chunk, row) => {
        vectors.set(chunk.embedding, row * dimensions);
      });
      return {
        generation: String(generations.get(knowledgeBaseId) ?? 0),
        chunkIds: all.map((chunk) => chunk.id),
        documentIds: all.map((chunk) => chunk.documentId),
        dimensions,
        vectors,
      };
    },
    async matchingDocumentIds(knowledgeBaseId, filter) {
      return documentsOf(knowledgeBaseId)
        .filter((stored) => metadataMatches(stored.record.metadata, filter))
        .map((stored) => stored.record.id);
    },
    async getChunks(knowledgeBaseId, chunkIds) {
      const wanted = new Set(chunkIds);
      return documentsOf(knowledgeBaseId).flatMap((stored) =>
        (chunks.get(stored.record.id) ?? [])
          .filter((chunk) => wanted.has(chunk.id))
          .map((chunk) => ({
            chunkId: chunk.id,
            documentId: chunk.documentId,
            filename: stored.record.filename,
            text: chunk.text,
            metadata: copy(stored.record.metadata),
          })),
      );
    },
  };
}
