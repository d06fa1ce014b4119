/**
 * Knowledge bases on SQLite (docs/KNOWLEDGE.md "Storage"). Every write is one `BEGIN IMMEDIATE`
 * transaction: SQLite has one writer at a time, so claims, replacements and completions are
 * atomic across processes. Chunks' keyword index is the FTS5 table kb_chunks_fts, kept in sync by
 * triggers on kb_chunks (so cascades from a document or a knowledge base clear it too).
 */
import type { MetadataFilter } from "@promptrun/contract";
import type { ChunkRecord, ClaimedDocument, DocumentRecord, KnowledgeStore } from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, gt, inArray, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { kbDocuments, knowledgeBases } from "../schema/sqlite.ts";
import { constraintError } from "../shared/constraint-error.ts";
import { decodeCursor, pageFrom } from "../shared/cursor.ts";
import {
  documentCursorKey,
  documentListCondition,
  ftsMatchQuery,
  knowledgeBaseConflict,
  knowledgeBaseRow,
  metadataMatches,
  packVectors,
  queryTerms,
  toDocumentRecord,
  toKnowledgeBaseRecord,
  toKnowledgeBaseView,
  vectorBytes,
} from "../shared/knowledge-rules.ts";
import { insertDeliveries } from "./run-store.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { isForeignKeyViolation, isUniqueViolation, withConstraintErrors } from "./sqlite-errors.ts";

type Queryable = Pick<BunSQLiteDatabase, "select" | "insert" | "update" | "delete">;

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
  documentCount: sql<number>`(SELECT count(*) FROM kb_documents d WHERE d.knowledge_base_id = knowledge_bases.id)`,
  chunkCount: sql<number>`(SELECT coalesce(sum(d.chunk_count), 0) FROM kb_documents d WHERE d.knowledge_base_id = knowledge_bases.id)`,
  bytes: sql<number>`(SELECT coalesce(sum(d.bytes), 0) FROM kb_documents d WHERE d.knowledge_base_id = knowledge_bases.id)`,
};

const readDocument = (query: Queryable, id: string): DocumentRecord | null => {
  const row = query
    .select(documentColumns)
    .from(kbDocuments)
    .innerJoin(knowledgeBases, eq(knowledgeBases.id, kbDocuments.knowledgeBaseId))
    .where(eq(kbDocuments.id, id))
    .get();
  return row ? toDocumentRecord(row, row.knowledgeBaseSlug) : null;
};

/** Chunks appeared or disappeared: the vector index of the knowledge base must reload. */
const bumpGeneration = (query: Queryable, knowledgeBaseId: string): void => {
  query
    .update(knowledgeBases)
    .set({ vectorGeneration: sql`${knowledgeBases.vectorGeneration} + 1` })
    .where(eq(knowledgeBases.id, knowledgeBaseId))
    .run();
};

/** Deletes documents (their chunks and keyword rows by cascade and trigger); bumps the generation if any had chunks. */
const deleteDocuments = (query: Queryable, knowledgeBaseId: string, ids: string[]): void => {
  if (ids.length === 0) return;
  const deleted = query
    .delete(kbDocuments)
    .where(and(eq(kbDocuments.knowledgeBaseId, knowledgeBaseId), inArray(kbDocuments.id, ids)))
    .returning({ chunkCount: kbDocuments.chunkCount })
    .all();
  if (deleted.some((row) => row.chunkCount > 0)) bumpGeneration(query, knowledgeBaseId);
};

const createStatements = (raw: SqliteContext["raw"]) => ({
  insertChunk: raw.prepare<never, [string, string, string, number, string, number, Uint8Array]>(
    `INSERT INTO kb_chunks (id, knowledge_base_id, document_id, ordinal, text, tokens, embedding)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ),
  /** The oldest waiting document: pending, or processing with an expired lease (each side by its index). */
  nextClaimable: raw.prepare<{ id: string }, [number]>(
    `SELECT id FROM (
       SELECT * FROM (SELECT id, created_at FROM kb_documents WHERE status = 'pending'
                      ORDER BY created_at, id LIMIT 1)
       UNION ALL
       SELECT * FROM (SELECT id, created_at FROM kb_documents WHERE status = 'processing' AND lease_until <= ?
                      ORDER BY created_at, id LIMIT 1))
     ORDER BY created_at, id LIMIT 1`,
  ),
  keyword: raw.prepare<{ chunkId: string; rank: number }, [string, string, number]>(
    `SELECT c.id AS chunkId, f.rank AS rank FROM kb_chunks_fts f JOIN kb_chunks c ON c.seq = f.rowid
     WHERE kb_chunks_fts MATCH ? AND c.knowledge_base_id = ? ORDER BY f.rank LIMIT ?`,
  ),
  keywordIn: raw.prepare<{ chunkId: string; rank: number }, [string, string, string, number]>(
    `SELECT c.id AS chunkId, f.rank AS rank FROM kb_chunks_fts f JOIN kb_chunks c ON c.seq = f.rowid
     WHERE kb_chunks_fts MATCH ? AND c.knowledge_base_id = ?
       AND c.document_id IN (SELECT json_each.value FROM json_each(?))
     ORDER BY f.rank LIMIT ?`,
  ),
  generation: raw.prepare<{ generation: number }, [string]>(
    "SELECT vector_generation AS generation FROM knowledge_bases WHERE id = ?",
  ),
  vectors: raw.prepare<{ id: string; documentId: string; embedding: Uint8Array }, [string]>(
    `SELECT id, document_id AS documentId, embedding FROM kb_chunks WHERE knowledge_base_id = ?
     ORDER BY document_id, ordinal`,
  ),
  chunks: raw.prepare<
    { chunkId: string; documentId: string; filename: string; text: string; metadata: string },
    [string, string]
  >(
    // CROSS JOIN fixes the order: each id through the unique id index. Left to the planner, it
    // scanned the knowledge base's chunks by its index (150 ms for 50 ids among 100k chunks).
    `SELECT c.id AS chunkId, c.document_id AS documentId, d.filename AS filename, c.text AS text,
            d.metadata AS metadata
     FROM json_each(?2) j CROSS JOIN kb_chunks c ON c.id = j.value
     JOIN kb_documents d ON d.id = c.document_id
     WHERE c.knowledge_base_id = ?1`,
  ),
});

type Statements = ReturnType<typeof createStatements>;

const insertChunks = (
  statements: Statements,
  document: { id: string; knowledgeBaseId: string },
  chunks: ChunkRecord[],
): void => {
  for (const chunk of chunks) {
    statements.insertChunk.run(
      chunk.id,
      document.knowledgeBaseId,
      document.id,
      chunk.ordinal,
      chunk.text,
      chunk.tokens,
      vectorBytes(chunk.embedding),
    );
  }
};

/** The document, when `owner` holds it in processing: the compare-and-set of complete and fail. */
const leasedBy = (query: Queryable, id: string, owner: string) =>
  query
    .select({ knowledgeBaseId: kbDocuments.knowledgeBaseId })
    .from(kbDocuments)
    .where(
      and(eq(kbDocuments.id, id), eq(kbDocuments.status, "processing"), eq(kbDocuments.leaseOwner, owner)),
    )
    .get() ?? null;

const matchingIds = (query: Queryable, knowledgeBaseId: string, filter: MetadataFilter): string[] =>
  query
    .select({ id: kbDocuments.id, metadata: kbDocuments.metadata })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.knowledgeBaseId, knowledgeBaseId), eq(kbDocuments.status, "ready")))
    .all()
    .filter((row) => metadataMatches(row.metadata, filter))
    .map((row) => row.id);

const claim = (
  db: BunSQLiteDatabase,
  statements: Statements,
  owner: string,
  leaseUntil: Date,
  now: Date,
): ClaimedDocument | null => {
  // An idle poll only reads: the write lock is taken when there is something to claim.
  if (!statements.nextClaimable.get(now.getTime())) return null;
  return db.transaction(
    (tx) => {
      const next = statements.nextClaimable.get(now.getTime());
      if (!next) return null;
      const claimed = tx
        .update(kbDocuments)
        .set({
          status: "processing",
          attempts: sql`${kbDocuments.attempts} + 1`,
          leaseOwner: owner,
          leaseUntil,
        })
        .where(eq(kbDocuments.id, next.id))
        .returning({ content: kbDocuments.content })
        .get();
      const document = readDocument(tx, next.id);
      const base = document
        ? tx.select().from(knowledgeBases).where(eq(knowledgeBases.id, document.knowledgeBaseId)).get()
        : undefined;
      if (!claimed || !document || !base) return null;
      return {
        document,
        content: new Uint8Array(claimed.content ?? new Uint8Array(0)),
        knowledgeBase: toKnowledgeBaseRecord(base),
      };
    },
    { behavior: "immediate" },
  );
};

const createSearch = (
  { db }: SqliteContext,
  statements: Statements,
): Pick<
  KnowledgeStore,
  "keywordSearch" | "vectorGeneration" | "loadVectors" | "matchingDocumentIds" | "getChunks"
> => ({
  async keywordSearch(knowledgeBaseId, query, limit, filter) {
    const terms = queryTerms(query);
    if (terms.length === 0 || limit <= 0) return [];
    const match = ftsMatchQuery(terms);
    // Chunks exist only for ready documents (completeDocument writes them with the status).
    const rows =
      filter === undefined
        ? statements.keyword.all(match, knowledgeBaseId, limit)
        : statements.keywordIn.all(
            match,
            knowledgeBaseId,
            JSON.stringify(matchingIds(db, knowledgeBaseId, filter)),
            limit,
          );
    // bm25: lower is better; the port's score: higher is better.
    return rows.map((row) => ({ chunkId: row.chunkId, score: -row.rank }));
  },

  async vectorGeneration(knowledgeBaseId) {
    return String(statements.generation.get(knowledgeBaseId)?.generation ?? 0);
  },

  async loadVectors(knowledgeBaseId) {
    // One read transaction: the generation is the one these vectors are of.
    return db.transaction((_tx) => {
      const generation = String(statements.generation.get(knowledgeBaseId)?.generation ?? 0);
      const rows = statements.vectors.all(knowledgeBaseId);
      const { dimensions, vectors } = packVectors(
        rows.map((row) => row.embedding),
        knowledgeBaseId,
      );
      return {
        generation,
        chunkIds: rows.map((row) => row.id),
        documentIds: rows.map((row) => row.documentId),
        dimensions,
        vectors,
      };
    });
  },

  async matchingDocumentIds(knowledgeBaseId, filter) {
    return matchingIds(db, knowledgeBaseId, filter);
  },

  async getChunks(knowledgeBaseId, chunkIds) {
    if (chunkIds.length === 0) return [];
    return statements.chunks
      .all(knowledgeBaseId, JSON.stringify(chunkIds))
      .map((row) => ({ ...row, metadata: JSON.parse(row.metadata) }));
  },
});

const createKnowledgeBases = ({
  db,
}: SqliteContext): Pick<
  KnowledgeStore,
  "createKnowledgeBase" | "getKnowledgeBase" | "listKnowledgeBases" | "deleteKnowledgeBase"
> => ({
  async createKnowledgeBase(knowledgeBase) {
    try {
      db.insert(knowledgeBases).values(knowledgeBaseRow(knowledgeBase)).run();
    } catch (error) {
      if (isUniqueViolation(error)) throw knowledgeBaseConflict(knowledgeBase.slug, error);
      throw constraintError("knowledge base", isForeignKeyViolation(error) ? "foreign-key" : null, error);
    }
  },

  async getKnowledgeBase(tenantId, slug) {
    const row = db
      .select(viewColumns)
      .from(knowledgeBases)
      .where(and(eq(knowledgeBases.tenantId, tenantId), eq(knowledgeBases.slug, slug)))
      .get();
    return row ? toKnowledgeBaseView(row) : null;
  },

  async listKnowledgeBases(tenantId, page) {
    const after = page.cursor ? decodeCursor(page.cursor, ["string"])[0] : null;
    const rows = db
      .select(viewColumns)
      .from(knowledgeBases)
      .where(
        and(
          eq(knowledgeBases.tenantId, tenantId),
          after === null ? undefined : gt(knowledgeBases.slug, after),
        ),
      )
      .orderBy(asc(knowledgeBases.slug))
      .limit(page.limit + 1)
      .all();
    return pageFrom(rows.map(toKnowledgeBaseView), page.limit, (base) => [base.slug]);
  },

  async deleteKnowledgeBase(tenantId, slug) {
    // Documents cascade, chunks cascade from them, and the FTS rows go with the chunks (trigger).
    const deleted = db
      .delete(knowledgeBases)
      .where(and(eq(knowledgeBases.tenantId, tenantId), eq(knowledgeBases.slug, slug)))
      .returning({ id: knowledgeBases.id })
      .all();
    return deleted.length > 0;
  },
});

const createDocuments = ({
  db,
}: SqliteContext): Pick<
  KnowledgeStore,
  "addDocument" | "getDocument" | "listDocuments" | "deleteDocument"
> => ({
  async addDocument(document) {
    const { content, knowledgeBaseSlug: _slug, ...fields } = document;
    return withConstraintErrors("document", () =>
      db.transaction(
        (tx) => {
          const replaced =
            document.externalId === null
              ? []
              : tx
                  .select({ id: kbDocuments.id })
                  .from(kbDocuments)
                  .where(
                    and(
                      eq(kbDocuments.knowledgeBaseId, document.knowledgeBaseId),
                      eq(kbDocuments.externalId, document.externalId),
                    ),
                  )
                  .all()
                  .map((row) => row.id);
          deleteDocuments(tx, document.knowledgeBaseId, replaced);
          tx.insert(kbDocuments)
            .values({ ...fields, status: "pending", content: Buffer.from(content) })
            .run();
          return { replaced };
        },
        { behavior: "immediate" },
      ),
    );
  },

  async getDocument(tenantId, knowledgeBaseId, id) {
    const document = readDocument(db, id);
    return document && document.tenantId === tenantId && document.knowledgeBaseId === knowledgeBaseId
      ? document
      : null;
  },

  async listDocuments(tenantId, knowledgeBaseId, page) {
    const rows = db
      .select(documentColumns)
      .from(kbDocuments)
      .innerJoin(knowledgeBases, eq(knowledgeBases.id, kbDocuments.knowledgeBaseId))
      .where(documentListCondition(kbDocuments, tenantId, knowledgeBaseId, page))
      .orderBy(desc(kbDocuments.createdAt), desc(kbDocuments.id))
      .limit(page.limit + 1)
      .all();
    const documents = rows.map((row) => toDocumentRecord(row, row.knowledgeBaseSlug));
    return pageFrom(documents, page.limit, documentCursorKey);
  },

  async deleteDocument(tenantId, knowledgeBaseId, id) {
    return db.transaction(
      (tx) => {
        const found = tx
          .select({ id: kbDocuments.id })
          .from(kbDocuments)
          .where(
            and(
              eq(kbDocuments.id, id),
              eq(kbDocuments.tenantId, tenantId),
              eq(kbDocuments.knowledgeBaseId, knowledgeBaseId),
            ),
          )
          .get();
        if (!found) return false;
        deleteDocuments(tx, knowledgeBaseId, [id]);
        return true;
      },
      { behavior: "immediate" },
    );
  },
});

const createQueue = (
  { db }: SqliteContext,
  statements: Statements,
): Pick<KnowledgeStore, "claimDocument" | "renewDocumentLease" | "completeDocument" | "failDocument"> => ({
  async claimDocument(owner, leaseUntil, now) {
    return claim(db, statements, owner, leaseUntil, now);
  },

  async renewDocumentLease(id, owner, leaseUntil) {
    const renewed = db
      .update(kbDocuments)
      .set({ leaseUntil })
      .where(
        and(eq(kbDocuments.id, id), eq(kbDocuments.status, "processing"), eq(kbDocuments.leaseOwner, owner)),
      )
      .returning({ id: kbDocuments.id })
      .all();
    return renewed.length > 0;
  },

  async completeDocument(id, owner, result) {
    return db.transaction(
      (tx) => {
        const leased = leasedBy(tx, id, owner);
        if (!leased) return null;
        insertChunks(statements, { id, knowledgeBaseId: leased.knowledgeBaseId }, result.chunks);
        tx.update(kbDocuments)
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
          .where(eq(kbDocuments.id, id))
          .run();
        if (result.chunks.length > 0) bumpGeneration(tx, leased.knowledgeBaseId);
        const document = readDocument(tx, id);
        if (!document) return null;
        insertDeliveries(tx, result.outbox(document));
        return document;
      },
      { behavior: "immediate" },
    );
  },

  async failDocument(id, owner, result) {
    return db.transaction(
      (tx) => {
        if (!leasedBy(tx, id, owner)) return null;
        tx.update(kbDocuments)
          .set({
            status: "failed",
            error: result.error,
            cost: result.cost,
            content: null,
            leaseOwner: null,
            leaseUntil: null,
          })
          .where(eq(kbDocuments.id, id))
          .run();
        const document = readDocument(tx, id);
        if (!document) return null;
        insertDeliveries(tx, result.outbox(document));
        return document;
      },
      { behavior: "immediate" },
    );
  },
});

export const createKnowledgeStore = (context: SqliteContext): KnowledgeStore => {
  const statements = createStatements(context.raw);
  return {
    ...createKnowledgeBases(context),
    ...createDocuments(context),
    ...createQueue(context, statements),
    ...createSearch(context, statements),
  };
};
