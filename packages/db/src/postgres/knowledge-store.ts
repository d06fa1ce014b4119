/**
 * Knowledge bases on Postgres (docs/KNOWLEDGE.md "Storage"). Locks are taken in one order, the
 * knowledge base's row before its documents' rows, by every transaction that adds or removes
 * chunks or documents of an externalId, so they never deadlock; the ingestion claim locks one
 * document with FOR UPDATE SKIP LOCKED. Keyword search: the generated tsvector column with GIN.
 */
import type { MetadataFilter } from "@promptrun/contract";
import type { ChunkRecord, ClaimedDocument, DocumentRecord, KnowledgeStore } from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, gt, inArray, sql } from "drizzle-orm";
import { kbChunks, kbDocuments, knowledgeBases } from "../schema/postgres.ts";
import { decodeCursor, pageFrom } from "../shared/cursor.ts";
import {
  documentCursorKey,
  documentListCondition,
  knowledgeBaseConflict,
  knowledgeBaseRow,
  metadataMatches,
  packVectors,
  queryTerms,
  toDocumentRecord,
  toKnowledgeBaseRecord,
  toKnowledgeBaseView,
  tsQueryText,
  vectorBytes,
} from "../shared/knowledge-rules.ts";
import type { PostgresContext, PostgresDatabase, PostgresQueryable } from "./postgres-context.ts";
import { constraintError, SQLSTATE, sqlState, withConstraintErrors } from "./postgres-errors.ts";
import { insertDeliveries } from "./run-store.ts";

/** Chunks per INSERT: 7 parameters each, far below the protocol's 65 535. */
const CHUNK_INSERT_BATCH = 1_000;

const {
  content: _content,
  leaseOwner: _leaseOwner,
  leaseUntil: _leaseUntil,
  ...documentFields
} = getTableColumns(kbDocuments);

/** A document row with its knowledge base's slug (kb_documents joined with knowledge_bases). */
const documentColumns = { ...documentFields, knowledgeBaseSlug: knowledgeBases.slug };

const viewColumns = {
  ...getTableColumns(knowledgeBases),
  documentCount:
    sql<number>`(SELECT count(*) FROM kb_documents d WHERE d.knowledge_base_id = knowledge_bases.id)`.mapWith(
      Number,
    ),
  chunkCount:
    sql<number>`(SELECT coalesce(sum(d.chunk_count), 0) FROM kb_documents d WHERE d.knowledge_base_id = knowledge_bases.id)`.mapWith(
      Number,
    ),
  bytes:
    sql<number>`(SELECT coalesce(sum(d.bytes), 0) FROM kb_documents d WHERE d.knowledge_base_id = knowledge_bases.id)`.mapWith(
      Number,
    ),
};

const readDocument = async (query: PostgresQueryable, id: string): Promise<DocumentRecord | null> => {
  const [row] = await query
    .select(documentColumns)
    .from(kbDocuments)
    .innerJoin(knowledgeBases, eq(knowledgeBases.id, kbDocuments.knowledgeBaseId))
    .where(eq(kbDocuments.id, id));
  return row ? toDocumentRecord(row, row.knowledgeBaseSlug) : null;
};

/** The knowledge base's row lock, first in every transaction that changes its chunks (one lock order). */
const lockKnowledgeBase = async (query: PostgresQueryable, knowledgeBaseId: string): Promise<boolean> => {
  const rows = await query
    .select({ id: knowledgeBases.id })
    .from(knowledgeBases)
    .where(eq(knowledgeBases.id, knowledgeBaseId))
    .for("no key update");
  return rows.length > 0;
};

/** Chunks appeared or disappeared: the vector index of the knowledge base must reload. */
const bumpGeneration = async (query: PostgresQueryable, knowledgeBaseId: string): Promise<void> => {
  await query
    .update(knowledgeBases)
    .set({ vectorGeneration: sql`${knowledgeBases.vectorGeneration} + 1` })
    .where(eq(knowledgeBases.id, knowledgeBaseId));
};

/** Deletes documents (their chunks by cascade); bumps the generation if any had chunks. Holds the knowledge base's lock. */
const deleteDocuments = async (
  query: PostgresQueryable,
  knowledgeBaseId: string,
  ids: string[],
): Promise<void> => {
  if (ids.length === 0) return;
  const deleted = await query
    .delete(kbDocuments)
    .where(and(eq(kbDocuments.knowledgeBaseId, knowledgeBaseId), inArray(kbDocuments.id, ids)))
    .returning({ chunkCount: kbDocuments.chunkCount });
  if (deleted.some((row) => row.chunkCount > 0)) await bumpGeneration(query, knowledgeBaseId);
};

/** Batched multi-row inserts: thousands of chunks in a few statements. */
const insertChunks = async (
  query: PostgresQueryable,
  document: { id: string; knowledgeBaseId: string },
  chunks: ChunkRecord[],
): Promise<void> => {
  for (let start = 0; start < chunks.length; start += CHUNK_INSERT_BATCH) {
    const rows = chunks.slice(start, start + CHUNK_INSERT_BATCH).map((chunk) => ({
      id: chunk.id,
      knowledgeBaseId: document.knowledgeBaseId,
      documentId: document.id,
      ordinal: chunk.ordinal,
      text: chunk.text,
      tokens: chunk.tokens,
      embedding: Buffer.from(vectorBytes(chunk.embedding)),
    }));
    await query.insert(kbChunks).values(rows);
  }
};

/** Ids of the ready documents matching the filter (exact: read and matched in code, as in SQLite). */
const matchingIds = async (
  query: PostgresQueryable,
  knowledgeBaseId: string,
  filter: MetadataFilter,
): Promise<string[]> => {
  const rows = await query
    .select({ id: kbDocuments.id, metadata: kbDocuments.metadata })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.knowledgeBaseId, knowledgeBaseId), eq(kbDocuments.status, "ready")));
  return rows.filter((row) => metadataMatches(row.metadata, filter)).map((row) => row.id);
};

/** Ids passed as one JSON parameter (any number of them, one bind). */
const idList = (ids: string[]) => sql`(SELECT json_array_elements_text(${JSON.stringify(ids)}::json))`;

/** The compare-and-set of complete and fail: the document, when `owner` holds it in processing. */
const leasedBy = (id: string, owner: string) =>
  and(eq(kbDocuments.id, id), eq(kbDocuments.status, "processing"), eq(kbDocuments.leaseOwner, owner));

const claim = (
  db: PostgresDatabase,
  owner: string,
  leaseUntil: Date,
  now: Date,
): Promise<ClaimedDocument | null> =>
  db.transaction(async (tx) => {
    // SKIP LOCKED: instances claiming at once each take a different document.
    const next = sql`(SELECT id FROM kb_documents
      WHERE status = 'pending' OR (status = 'processing' AND lease_until <= ${now.toISOString()}::timestamptz)
      ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)`;
    const [claimed] = await tx
      .update(kbDocuments)
      .set({
        status: "processing",
        attempts: sql`${kbDocuments.attempts} + 1`,
        leaseOwner: owner,
        leaseUntil,
      })
      .where(eq(kbDocuments.id, next))
      .returning({ id: kbDocuments.id, content: kbDocuments.content });
    if (!claimed) return null;
    const document = await readDocument(tx, claimed.id);
    const [base] = document
      ? await tx.select().from(knowledgeBases).where(eq(knowledgeBases.id, document.knowledgeBaseId))
      : [];
    if (!document || !base) return null;
    return {
      document,
      content: new Uint8Array(claimed.content ?? new Uint8Array(0)),
      knowledgeBase: toKnowledgeBaseRecord(base),
    };
  });

const createKnowledgeBases = ({
  db,
}: PostgresContext): Pick<
  KnowledgeStore,
  "createKnowledgeBase" | "getKnowledgeBase" | "listKnowledgeBases" | "deleteKnowledgeBase"
> => ({
  async createKnowledgeBase(knowledgeBase) {
    try {
      await db.insert(knowledgeBases).values(knowledgeBaseRow(knowledgeBase));
    } catch (error) {
      if (sqlState(error) === SQLSTATE.uniqueViolation)
        throw knowledgeBaseConflict(knowledgeBase.slug, error);
      throw constraintError("knowledge base", error);
    }
  },

  async getKnowledgeBase(tenantId, slug) {
    const [row] = await db
      .select(viewColumns)
      .from(knowledgeBases)
      .where(and(eq(knowledgeBases.tenantId, tenantId), eq(knowledgeBases.slug, slug)));
    return row ? toKnowledgeBaseView(row) : null;
  },

  async listKnowledgeBases(tenantId, page) {
    const after = page.cursor ? decodeCursor(page.cursor, ["string"])[0] : null;
    const rows = await db
      .select(viewColumns)
      .from(knowledgeBases)
      .where(
        and(
          eq(knowledgeBases.tenantId, tenantId),
          after === null ? undefined : gt(knowledgeBases.slug, after),
        ),
      )
      .orderBy(asc(knowledgeBases.slug))
      .limit(page.limit + 1);
    return pageFrom(rows.map(toKnowledgeBaseView), page.limit, (base) => [base.slug]);
  },

  async deleteKnowledgeBase(tenantId, slug) {
    // One statement: documents cascade, chunks (and their tsvectors) cascade from them.
    const deleted = await db
      .delete(knowledgeBases)
      .where(and(eq(knowledgeBases.tenantId, tenantId), eq(knowledgeBases.slug, slug)))
      .returning({ id: knowledgeBases.id });
    return deleted.length > 0;
  },
});

const createDocuments = ({
  db,
}: PostgresContext): Pick<
  KnowledgeStore,
  "addDocument" | "getDocument" | "listDocuments" | "deleteDocument"
> => ({
  async addDocument(document) {
    const { content, knowledgeBaseSlug: _slug, externalId, ...fields } = document;
    return withConstraintErrors("document", () =>
      db.transaction(async (tx) => {
        let replaced: string[] = [];
        if (externalId !== null) {
          // Concurrent adds of one externalId queue on the knowledge base's lock: each sees the
          // previous one's row and replaces it, so exactly one is left.
          await lockKnowledgeBase(tx, document.knowledgeBaseId);
          const rows = await tx
            .select({ id: kbDocuments.id })
            .from(kbDocuments)
            .where(
              and(
                eq(kbDocuments.knowledgeBaseId, document.knowledgeBaseId),
                eq(kbDocuments.externalId, externalId),
              ),
            );
          replaced = rows.map((row) => row.id);
          await deleteDocuments(tx, document.knowledgeBaseId, replaced);
        }
        await tx
          .insert(kbDocuments)
          .values({ ...fields, externalId, status: "pending", content: Buffer.from(content) });
        return { replaced };
      }),
    );
  },

  async getDocument(tenantId, knowledgeBaseId, id) {
    const document = await readDocument(db, id);
    return document && document.tenantId === tenantId && document.knowledgeBaseId === knowledgeBaseId
      ? document
      : null;
  },

  async listDocuments(tenantId, knowledgeBaseId, page) {
    const rows = await db
      .select(documentColumns)
      .from(kbDocuments)
      .innerJoin(knowledgeBases, eq(knowledgeBases.id, kbDocuments.knowledgeBaseId))
      .where(documentListCondition(kbDocuments, tenantId, knowledgeBaseId, page))
      .orderBy(desc(kbDocuments.createdAt), desc(kbDocuments.id))
      .limit(page.limit + 1);
    const documents = rows.map((row) => toDocumentRecord(row, row.knowledgeBaseSlug));
    return pageFrom(documents, page.limit, documentCursorKey);
  },

  async deleteDocument(tenantId, knowledgeBaseId, id) {
    return db.transaction(async (tx) => {
      await lockKnowledgeBase(tx, knowledgeBaseId);
      const [found] = await tx
        .select({ id: kbDocuments.id })
        .from(kbDocuments)
        .where(
          and(
            eq(kbDocuments.id, id),
            eq(kbDocuments.tenantId, tenantId),
            eq(kbDocuments.knowledgeBaseId, knowledgeBaseId),
          ),
        );
      if (!found) return false;
      await deleteDocuments(tx, knowledgeBaseId, [id]);
      return true;
    });
  },
});

const createQueue = ({
  db,
}: PostgresContext): Pick<
  KnowledgeStore,
  "claimDocument" | "renewDocumentLease" | "completeDocument" | "failDocument"
> => ({
  claimDocument: (owner, leaseUntil, now) => claim(db, owner, leaseUntil, now),

  async renewDocumentLease(id, owner, leaseUntil) {
    const renewed = await db
      .update(kbDocuments)
      .set({ leaseUntil })
      .where(leasedBy(id, owner))
      .returning({ id: kbDocuments.id });
    return renewed.length > 0;
  },

  async completeDocument(id, owner, result) {
    const [located] = await db
      .select({ knowledgeBaseId: kbDocuments.knowledgeBaseId })
      .from(kbDocuments)
      .where(eq(kbDocuments.id, id));
    if (!located) return null;
    const { knowledgeBaseId } = located;
    return withConstraintErrors("document chunks", () =>
      db.transaction(async (tx) => {
        await lockKnowledgeBase(tx, knowledgeBaseId);
        const [ended] = await tx
          .update(kbDocuments)
          .set({
            status: "ready",
            error: null,
            chunkCount: result.chunks.length,
            tokens: result.tokens,
            cost: result.cost,
            readyAt: result.readyAt,
            content: null,
            leaseOwner: null,
            leaseUntil: null,
          })
          .where(and(leasedBy(id, owner), eq(kbDocuments.knowledgeBaseId, knowledgeBaseId)))
          .returning({ id: kbDocuments.id });
        if (!ended) return null;
        await insertChunks(tx, { id, knowledgeBaseId }, result.chunks);
        if (result.chunks.length > 0) await bumpGeneration(tx, knowledgeBaseId);
        const document = await readDocument(tx, id);
        if (!document) throw new Error(`document ${id} vanished inside its transaction`);
        await insertDeliveries(tx, result.outbox(document));
        return document;
      }),
    );
  },

  async failDocument(id, owner, result) {
    return withConstraintErrors("document", () =>
      db.transaction(async (tx) => {
        const [ended] = await tx
          .update(kbDocuments)
          .set({
            status: "failed",
            error: result.error,
            cost: result.cost,
            content: null,
            leaseOwner: null,
            leaseUntil: null,
          })
          .where(leasedBy(id, owner))
          .returning({ id: kbDocuments.id });
        if (!ended) return null;
        const document = await readDocument(tx, id);
        if (!document) throw new Error(`document ${id} vanished inside its transaction`);
        await insertDeliveries(tx, result.outbox(document));
        return document;
      }),
    );
  },
});

const createSearch = ({
  db,
}: PostgresContext): Pick<
  KnowledgeStore,
  "keywordSearch" | "vectorGeneration" | "loadVectors" | "matchingDocumentIds" | "getChunks"
> => ({
  async keywordSearch(knowledgeBaseId, query, limit, filter) {
    const terms = queryTerms(query);
    if (terms.length === 0 || limit <= 0) return [];
    const ids = filter === undefined ? null : await matchingIds(db, knowledgeBaseId, filter);
    if (ids !== null && ids.length === 0) return [];
    // Chunks exist only for ready documents (completeDocument writes them with the status).
    const rows = await db.execute<{ chunkId: string; score: number }>(sql`
      SELECT c.id AS "chunkId", ts_rank(c.search_vector, q) AS score
      FROM kb_chunks c, to_tsquery('english', ${tsQueryText(terms)}) q
      WHERE c.knowledge_base_id = ${knowledgeBaseId} AND c.search_vector @@ q
        ${ids === null ? sql`` : sql`AND c.document_id IN ${idList(ids)}`}
      ORDER BY score DESC, c.id LIMIT ${limit}`);
    return rows.map((row) => ({ chunkId: row.chunkId, score: Number(row.score) }));
  },

  async vectorGeneration(knowledgeBaseId) {
    const [row] = await db
      .select({ generation: knowledgeBases.vectorGeneration })
      .from(knowledgeBases)
      .where(eq(knowledgeBases.id, knowledgeBaseId));
    return String(row?.generation ?? 0);
  },

  async loadVectors(knowledgeBaseId) {
    // One snapshot: the generation is the one these vectors are of.
    return db.transaction(
      async (tx) => {
        const [base] = await tx
          .select({ generation: knowledgeBases.vectorGeneration })
          .from(knowledgeBases)
          .where(eq(knowledgeBases.id, knowledgeBaseId));
        const rows = await tx
          .select({ id: kbChunks.id, documentId: kbChunks.documentId, embedding: kbChunks.embedding })
          .from(kbChunks)
          .where(eq(kbChunks.knowledgeBaseId, knowledgeBaseId))
          .orderBy(asc(kbChunks.documentId), asc(kbChunks.ordinal));
        const { dimensions, vectors } = packVectors(
          rows.map((row) => row.embedding),
          knowledgeBaseId,
        );
        return {
          generation: String(base?.generation ?? 0),
          chunkIds: rows.map((row) => row.id),
          documentIds: rows.map((row) => row.documentId),
          dimensions,
          vectors,
        };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  },

  matchingDocumentIds: (knowledgeBaseId, filter) => matchingIds(db, knowledgeBaseId, filter),

  async getChunks(knowledgeBaseId, chunkIds) {
    if (chunkIds.length === 0) return [];
    return db
      .select({
        chunkId: kbChunks.id,
        documentId: kbChunks.documentId,
        filename: kbDocuments.filename,
        text: kbChunks.text,
        metadata: kbDocuments.metadata,
      })
      .from(kbChunks)
      .innerJoin(kbDocuments, eq(kbDocuments.id, kbChunks.documentId))
      .where(and(eq(kbChunks.knowledgeBaseId, knowledgeBaseId), sql`${kbChunks.id} IN ${idList(chunkIds)}`));
  },
});

export const createKnowledgeStore = (context: PostgresContext): KnowledgeStore => ({
  ...createKnowledgeBases(context),
  ...createDocuments(context),
  ...createQueue(context),
  ...createSearch(context),
});
