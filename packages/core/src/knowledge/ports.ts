/**
 * What knowledge bases need from the outside world (docs/KNOWLEDGE.md): the store (SQLite and
 * Postgres in `@promptrun/db`, in memory in `@promptrun/core/testing`), text extraction, a
 * chunker and embedding models. The knowledge service, the ingestion worker and search are built
 * on these and nothing else.
 */
import type {
  Chunking,
  DocumentMediaType,
  DocumentStatus,
  Metadata,
  MetadataFilter,
  Page,
  ParsedSearchRequest,
  SearchHit,
} from "@promptrun/contract";
import type { WebhookDeliveryRecord } from "../ports.ts";

export interface KnowledgeBaseRecord {
  id: string;
  tenantId: string;
  slug: string;
  description: string | null;
  /** `provider:model`; every chunk of the knowledge base is embedded by it. */
  embeddingModel: string;
  chunking: Chunking;
  createdAt: Date;
}

/** A knowledge base as read: with the counts of its documents and chunks and its bytes. */
export interface KnowledgeBaseView extends KnowledgeBaseRecord {
  documentCount: number;
  chunkCount: number;
  /** Bytes of its documents as uploaded. */
  bytes: number;
}

export interface DocumentCost {
  /** US dollars. */
  total: number;
  /** false when the embedding model has no known price. */
  priced: boolean;
}

export interface DocumentRecord {
  id: string;
  tenantId: string;
  knowledgeBaseId: string;
  /** The knowledge base's slug (read with the document, for presenting it). */
  knowledgeBaseSlug: string;
  /** The caller's id: adding a document with the same externalId replaces this one. */
  externalId: string | null;
  filename: string;
  mediaType: DocumentMediaType;
  metadata: Metadata;
  status: DocumentStatus;
  error: string | null;
  /** Bytes as uploaded. */
  bytes: number;
  chunkCount: number;
  /** Tokens of the chunks embedded. */
  tokens: number;
  cost: DocumentCost | null;
  /** Ingestion attempts started (a crash mid-ingestion leaves one started and unfinished). */
  attempts: number;
  createdAt: Date;
  readyAt: Date | null;
}

export type NewDocument = Omit<
  DocumentRecord,
  "status" | "error" | "chunkCount" | "tokens" | "cost" | "attempts" | "readyAt"
> & {
  /** The upload itself, kept until the document is ready or failed. */
  content: Uint8Array;
};

/** A document claimed for ingestion: with its upload and its knowledge base. */
export interface ClaimedDocument {
  document: DocumentRecord;
  content: Uint8Array;
  knowledgeBase: KnowledgeBaseRecord;
}

export interface ChunkRecord {
  id: string;
  documentId: string;
  /** Position in its document, from 0. */
  ordinal: number;
  text: string;
  tokens: number;
  /** float32; its length is the embedding model's dimensions. */
  embedding: Float32Array;
}

/** A chunk as search presents it. */
export interface ChunkView {
  chunkId: string;
  documentId: string;
  filename: string;
  text: string;
  metadata: Metadata;
}

/** Every vector of a knowledge base's ready documents, for an exact scan (see vector-index.ts). */
export interface StoredVectors {
  /** Changes whenever chunks are added or removed (see KnowledgeStore.vectorGeneration). */
  generation: string;
  chunkIds: string[];
  documentIds: string[];
  dimensions: number;
  /** chunkIds.length × dimensions floats, row-major. */
  vectors: Float32Array;
}

/**
 * Builds a document event's webhook outbox rows from the document as the write leaves it;
 * synchronous, so the SQLite store can call it inside its synchronous transaction.
 */
export type DocumentOutbox = (document: DocumentRecord) => WebhookDeliveryRecord[];

export interface KnowledgeStore {
  /** Rejects with PromptrunError("conflict") when the tenant already has the slug. */
  createKnowledgeBase(knowledgeBase: KnowledgeBaseRecord): Promise<void>;
  getKnowledgeBase(tenantId: string, slug: string): Promise<KnowledgeBaseView | null>;
  /** Slug order; keyset cursor (an invalid cursor: PromptrunError("invalid")). */
  listKnowledgeBases(
    tenantId: string,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<KnowledgeBaseView>>;
  /** Deletes it with its documents and chunks in one transaction; false when unknown. */
  deleteKnowledgeBase(tenantId: string, slug: string): Promise<boolean>;

  /**
   * Inserts a pending document with its upload. With an externalId, in the same transaction,
   * first deletes the knowledge base's documents of that externalId with their chunks (a
   * replacement); returns their ids. Concurrent adds of one externalId leave exactly one.
   */
  addDocument(document: NewDocument): Promise<{ replaced: string[] }>;
  getDocument(tenantId: string, knowledgeBaseId: string, id: string): Promise<DocumentRecord | null>;
  /** Newest first; keyset cursor; `status` narrows. */
  listDocuments(
    tenantId: string,
    knowledgeBaseId: string,
    page: { status?: DocumentStatus | undefined; cursor?: string | null; limit: number },
  ): Promise<Page<DocumentRecord>>;
  /** Deletes it with its chunks in one transaction; false when unknown. */
  deleteDocument(tenantId: string, knowledgeBaseId: string, id: string): Promise<boolean>;

  // ------------------------------------------------ ingestion queue (durable, like runs)

  /**
   * Leases the oldest document waiting for ingestion to `owner` until `leaseUntil`, atomically:
   * status pending, or processing with a lease expired at `now` (its instance died). Sets status
   * processing and attempts + 1. Several instances never get the same document at once.
   */
  claimDocument(owner: string, leaseUntil: Date, now: Date): Promise<ClaimedDocument | null>;
  /** Extends `owner`'s lease; false when the document is gone, ended or taken over. */
  renewDocumentLease(id: string, owner: string, leaseUntil: Date): Promise<boolean>;
  /**
   * processing (leased by `owner`) → ready, in one transaction: the chunks (keyword index and
   * vectors), the counts, tokens and cost, the upload dropped, and the outbox rows. null (nothing
   * written) when the document was deleted, replaced, or taken over meanwhile.
   */
  completeDocument(
    id: string,
    owner: string,
    result: {
      chunks: ChunkRecord[];
      tokens: number;
      cost: DocumentCost;
      readyAt: Date;
      outbox: DocumentOutbox;
    },
  ): Promise<DocumentRecord | null>;
  /** processing (leased by `owner`) → failed with the error, the upload dropped; null as completeDocument. */
  failDocument(
    id: string,
    owner: string,
    result: { error: string; cost: DocumentCost | null; at: Date; outbox: DocumentOutbox },
  ): Promise<DocumentRecord | null>;

  // ------------------------------------------------ search

  /**
   * Full-text search over the ready chunks of a knowledge base (SQLite FTS5 bm25, Postgres
   * ts_rank): best first, at most `limit`, only chunks of documents matching `filter`. `query`
   * is the user's text: the store turns it into its own query syntax (any word may match), so no
   * input is a syntax error. score: higher is better.
   */
  keywordSearch(
    knowledgeBaseId: string,
    query: string,
    limit: number,
    filter?: MetadataFilter,
  ): Promise<Array<{ chunkId: string; score: number }>>;
  /** A value that changes whenever the knowledge base's chunks change (cheap: one indexed read). */
  vectorGeneration(knowledgeBaseId: string): Promise<string>;
  /** Every chunk vector of the knowledge base's ready documents, with the generation they are of. */
  loadVectors(knowledgeBaseId: string): Promise<StoredVectors>;
  /** Ids of the knowledge base's documents whose metadata matches the filter. */
  matchingDocumentIds(knowledgeBaseId: string, filter: MetadataFilter): Promise<string[]>;
  /** The chunks of these ids that still exist, in no particular order. */
  getChunks(knowledgeBaseId: string, chunkIds: string[]): Promise<ChunkView[]>;
}

// ---------------------------------------------------------------- extraction, chunking, embedding

/** A document's text could not be read: the document fails with this message. */
export class ExtractionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExtractionError";
  }
}

export interface ExtractedText {
  text: string;
  /** PDF pages (for the ingest rate); absent for other types. */
  pages?: number;
}

/** Reads a document's text. Throws ExtractionError with a message a person can act on. */
export type TextExtractor = (content: Uint8Array, mediaType: DocumentMediaType) => Promise<ExtractedText>;

export interface TextChunk {
  text: string;
  tokens: number;
}

/** Splits text into chunks of at most `maxTokens` tokens, consecutive chunks sharing about `overlap`. */
export type Chunker = (text: string, chunking: Chunking) => TextChunk[];

export interface EmbeddingResult {
  /** One per text, in order; all of the model's dimensions. */
  vectors: Float32Array[];
  /** Input tokens billed. */
  tokens: number;
  cost: DocumentCost;
}

export interface EmbeddingModel {
  /** `provider:model`. */
  readonly ref: string;
  /** Embeds the texts (batched and retried inside); throws EmbeddingError when it gives up. */
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<EmbeddingResult>;
}

/** Embedding failed for good (after retries), or the model is unknown / not configured. */
export class EmbeddingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EmbeddingError";
  }
}

/** Resolves `provider:model` to a model; throws EmbeddingError for an unknown provider or one without credentials. */
export type EmbeddingModelResolver = (ref: string) => EmbeddingModel;

// ---------------------------------------------------------------- search, as runs use it

export interface SearchOutcome {
  hits: SearchHit[];
  /** What embedding the query cost (0 and priced for keyword search and dev:hash). */
  cost: DocumentCost;
  /** Input tokens of the query's embedding (0 for keyword search). */
  tokens: number;
}

/** Searching a tenant's knowledge base: the service's search, the engine's retrieval and the knowledge_base tool use it. */
export interface KnowledgeSearch {
  /** Throws PromptrunError not_found for a slug the tenant does not have. */
  search(tenantId: string, slug: string, request: ParsedSearchRequest): Promise<SearchOutcome>;
  /**
   * The chunks of these ids that still exist in the tenant's knowledge base `slug` (any order; []
   * for an unknown slug, never a throw for that): a run continuing after a pause or a restart
   * re-reads the texts of the chunks it retrieved (for {{retrieval}} and citation quotes).
   */
  chunks(tenantId: string, slug: string, chunkIds: string[]): Promise<ChunkView[]>;
}
