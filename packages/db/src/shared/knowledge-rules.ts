/**
 * What both knowledge stores share (docs/KNOWLEDGE.md "Storage"): turning a user's query into
 * "any of these words", the metadata filter, vector bytes, and rows as port records.
 */
import type { DocumentStatus, Metadata, MetadataFilter } from "@promptrun/contract";
import {
  type DocumentRecord,
  type KnowledgeBaseRecord,
  type KnowledgeBaseView,
  PromptrunError,
} from "@promptrun/core";
import { type AnyColumn, and, eq, lt, or, type SQL } from "drizzle-orm";
import { decodeCursor } from "./cursor.ts";

/** Words of a query searched at most (the rest are ignored): bounds the size of the index query. */
export const MAX_QUERY_TERMS = 64;

/**
 * The distinct words (runs of letters and digits, lower-cased) of the user's query, at most
 * MAX_QUERY_TERMS. Nothing else reaches the full-text syntax, so no query is a syntax error.
 */
export const queryTerms = (query: string): string[] => {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_QUERY_TERMS);
};

/** FTS5 MATCH text: each word a quoted string (no operator survives), any of them (OR). */
export const ftsMatchQuery = (terms: string[]): string => terms.map((term) => `"${term}"`).join(" OR ");

/** to_tsquery text: the words (letters and digits only, so no operator) joined by `|` (OR). */
export const tsQueryText = (terms: string[]): string => terms.join(" | ");

/** A key's string matches an equal value or an array holding it; `{in: [...]}` matches any of them. */
export const metadataMatches = (metadata: Metadata, filter: MetadataFilter): boolean =>
  Object.entries(filter).every(([key, condition]) => {
    if (!Object.hasOwn(metadata, key)) return false;
    const value = metadata[key];
    const wanted = typeof condition === "string" ? [condition] : condition.in;
    const present: unknown[] = Array.isArray(value) ? value : [value];
    return present.some((item) => typeof item === "string" && wanted.includes(item));
  });

/** A vector's float32 bytes as stored (the platform's byte order: little-endian on x86 and ARM). */
export const vectorBytes = (vector: Float32Array): Uint8Array =>
  new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);

/** Rows of stored vectors packed row-major into one Float32Array (copied: blobs may be unaligned). */
export const packVectors = (
  embeddings: Uint8Array[],
  knowledgeBaseId: string,
): { dimensions: number; vectors: Float32Array } => {
  const first = embeddings[0];
  if (first === undefined) return { dimensions: 0, vectors: new Float32Array(0) };
  const rowBytes = first.byteLength;
  const packed = new Uint8Array(rowBytes * embeddings.length);
  embeddings.forEach((embedding, index) => {
    if (embedding.byteLength !== rowBytes) {
      throw new Error(`knowledge base ${knowledgeBaseId} holds vectors of different dimensions`);
    }
    packed.set(embedding, index * rowBytes);
  });
  return { dimensions: rowBytes / 4, vectors: new Float32Array(packed.buffer) };
};

export const knowledgeBaseConflict = (slug: string, cause: unknown) =>
  new PromptrunError(
    "conflict",
    `knowledge base "${slug}" already exists; choose another slug or delete the existing one first`,
    { cause },
  );

/** A knowledge_bases row as both dialects select it. */
export interface KnowledgeBaseRow {
  id: string;
  tenantId: string;
  slug: string;
  description: string | null;
  embeddingModel: string;
  chunkMaxTokens: number;
  chunkOverlap: number;
  createdAt: Date;
}

export const toKnowledgeBaseRecord = (row: KnowledgeBaseRow): KnowledgeBaseRecord => ({
  id: row.id,
  tenantId: row.tenantId,
  slug: row.slug,
  description: row.description,
  embeddingModel: row.embeddingModel,
  chunking: { maxTokens: row.chunkMaxTokens, overlap: row.chunkOverlap },
  createdAt: row.createdAt,
});

/** The knowledge_bases columns of a new record. */
export const knowledgeBaseRow = (record: KnowledgeBaseRecord) => ({
  id: record.id,
  tenantId: record.tenantId,
  slug: record.slug,
  description: record.description,
  embeddingModel: record.embeddingModel,
  chunkMaxTokens: record.chunking.maxTokens,
  chunkOverlap: record.chunking.overlap,
  createdAt: record.createdAt,
});

/** A kb_documents row (without the upload and the lease) as both dialects select it. */
export type DocumentRow = Omit<DocumentRecord, "knowledgeBaseSlug">;

export const toDocumentRecord = (row: DocumentRow, knowledgeBaseSlug: string): DocumentRecord => ({
  id: row.id,
  tenantId: row.tenantId,
  knowledgeBaseId: row.knowledgeBaseId,
  knowledgeBaseSlug,
  externalId: row.externalId,
  filename: row.filename,
  mediaType: row.mediaType,
  metadata: row.metadata,
  status: row.status,
  error: row.error,
  bytes: row.bytes,
  chunkCount: row.chunkCount,
  tokens: row.tokens,
  cost: row.cost,
  attempts: row.attempts,
  createdAt: row.createdAt,
  readyAt: row.readyAt,
});

interface DocumentListColumns {
  tenantId: AnyColumn;
  knowledgeBaseId: AnyColumn;
  status: AnyColumn;
  createdAt: AnyColumn;
  id: AnyColumn;
}

/** listDocuments: the knowledge base's documents (of a status), after the cursor's (createdAt ms, id), newest first. */
export const documentListCondition = (
  documents: DocumentListColumns,
  tenantId: string,
  knowledgeBaseId: string,
  page: { status?: DocumentStatus | undefined; cursor?: string | null },
): SQL | undefined => {
  const after = page.cursor ? decodeCursor(page.cursor, ["number", "string"]) : null;
  return and(
    eq(documents.tenantId, tenantId),
    eq(documents.knowledgeBaseId, knowledgeBaseId),
    page.status === undefined ? undefined : eq(documents.status, page.status),
    after === null
      ? undefined
      : or(
          lt(documents.createdAt, new Date(after[0])),
          and(eq(documents.createdAt, new Date(after[0])), lt(documents.id, after[1])),
        ),
  );
};

/** The cursor key of a listed document. */
export const documentCursorKey = (document: { createdAt: Date; id: string }): [number, string] => [
  document.createdAt.getTime(),
  document.id,
];

/** A knowledge_bases row with its documents' aggregates. */
export interface KnowledgeBaseViewRow extends KnowledgeBaseRow {
  documentCount: number;
  chunkCount: number;
  bytes: number;
}

export const toKnowledgeBaseView = (row: KnowledgeBaseViewRow): KnowledgeBaseView => ({
  ...toKnowledgeBaseRecord(row),
  documentCount: Number(row.documentCount),
  chunkCount: Number(row.chunkCount),
  bytes: Number(row.bytes),
});
