/**
 * Knowledge bases: documents in, chunked and embedded in the background, searched by keyword,
 * vector or both, and cited by runs (docs/KNOWLEDGE.md).
 */
import { z } from "zod";
import { slugSchema, uuidSchema } from "./ids.ts";
import {
  DEFAULT_SEARCH_TOP_K,
  metadataFilterSchema,
  SEARCH_QUERY_MAX_BYTES,
  SEARCH_TOP_K_MAX,
  searchModeSchema,
} from "./retrieval.ts";
import { metadataSchema } from "./run.ts";

export const CHUNK_MAX_TOKENS_MIN = 64;
export const CHUNK_MAX_TOKENS_MAX = 2048;
export const DEFAULT_CHUNK_MAX_TOKENS = 512;
export const DEFAULT_CHUNK_OVERLAP = 64;
/** Default of PROMPTRUN_MAX_UPLOAD_BYTES. */
export const DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** The media types a document may have; anything else is refused with 415. */
export const DOCUMENT_MEDIA_TYPES = [
  "text/plain",
  "text/markdown",
  "text/html",
  "application/pdf",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
] as const;
export const documentMediaTypeSchema = z.enum(DOCUMENT_MEDIA_TYPES);
export type DocumentMediaType = z.infer<typeof documentMediaTypeSchema>;

/** `provider:model` of an embedding model (`dev:hash` is built in, keyless). */
export const embeddingModelRefSchema = z
  .string()
  .max(200)
  .regex(/^[a-z0-9][a-z0-9\-_]*:[^\s]+$/, "must be provider:model, e.g. openai:text-embedding-3-small");

export const chunkingSchema = z
  .strictObject({
    maxTokens: z
      .number()
      .int()
      .min(CHUNK_MAX_TOKENS_MIN)
      .max(CHUNK_MAX_TOKENS_MAX)
      .default(DEFAULT_CHUNK_MAX_TOKENS),
    overlap: z.number().int().min(0).optional(),
  })
  .transform((chunking) => ({
    maxTokens: chunking.maxTokens,
    overlap: chunking.overlap ?? Math.min(DEFAULT_CHUNK_OVERLAP, Math.floor(chunking.maxTokens / 2)),
  }))
  .refine((chunking) => chunking.overlap <= Math.floor(chunking.maxTokens / 2), {
    message: "chunking.overlap must be at most 50 % of chunking.maxTokens",
    path: ["overlap"],
  });
export type Chunking = z.output<typeof chunkingSchema>;

/** POST /api/v1/knowledge-bases. */
export const createKnowledgeBaseRequestSchema = z
  .strictObject({
    slug: slugSchema,
    description: z.string().max(2000).optional(),
    embeddingModel: embeddingModelRefSchema.optional(),
    chunking: chunkingSchema.optional(),
  })
  .meta({ id: "CreateKnowledgeBaseRequest" });
export type CreateKnowledgeBaseRequest = z.input<typeof createKnowledgeBaseRequestSchema>;

export const knowledgeBaseSchema = z
  .object({
    id: uuidSchema,
    slug: slugSchema,
    description: z.string().nullable(),
    embeddingModel: z.string(),
    chunking: z.object({ maxTokens: z.number().int(), overlap: z.number().int() }),
    documentCount: z.number().int().nonnegative(),
    chunkCount: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative().meta({ description: "Bytes of the documents as uploaded." }),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: "KnowledgeBase" });
export type KnowledgeBase = z.infer<typeof knowledgeBaseSchema>;

export const documentStatusSchema = z.enum(["pending", "processing", "ready", "failed"]);
export type DocumentStatus = z.infer<typeof documentStatusSchema>;

/** Cost of a document's embeddings (US dollars). */
export const documentCostSchema = z.object({ total: z.number(), priced: z.boolean() }).meta({
  id: "DocumentCost",
  description: "US dollars; priced is false when the model has no known price.",
});

export const knowledgeDocumentSchema = z
  .object({
    id: uuidSchema,
    knowledgeBase: slugSchema,
    externalId: z.string().nullable(),
    filename: z.string(),
    mediaType: documentMediaTypeSchema,
    metadata: metadataSchema,
    status: documentStatusSchema,
    error: z.string().nullable(),
    bytes: z.number().int().nonnegative(),
    chunkCount: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative().meta({ description: "Tokens of the chunks embedded." }),
    cost: documentCostSchema.nullable(),
    createdAt: z.iso.datetime(),
    readyAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "KnowledgeDocument" });
export type KnowledgeDocument = z.infer<typeof knowledgeDocumentSchema>;

export const EXTERNAL_ID_MAX_LENGTH = 200;
export const FILENAME_MAX_LENGTH = 255;
export const externalIdSchema = z.string().min(1).max(EXTERNAL_ID_MAX_LENGTH);
export const documentFilenameSchema = z
  .string()
  .min(1)
  .max(FILENAME_MAX_LENGTH)
  .refine((name) => !/[/\\\0]/.test(name), "must be a file name, not a path");

/** JSON body of POST /api/v1/knowledge-bases/{kb}/documents (the multipart form has the same fields). */
export const addDocumentJsonRequestSchema = z
  .strictObject({
    text: z.string().min(1),
    filename: documentFilenameSchema,
    mediaType: z.string().max(200).optional(),
    metadata: metadataSchema.optional(),
    externalId: externalIdSchema.optional(),
  })
  .meta({ id: "AddDocumentRequest" });
export type AddDocumentJsonRequest = z.infer<typeof addDocumentJsonRequestSchema>;

export const documentAcceptedSchema = z
  .object({ id: uuidSchema, status: z.literal("pending") })
  .meta({ id: "DocumentAccepted" });
export type DocumentAccepted = z.infer<typeof documentAcceptedSchema>;

/** POST /api/v1/knowledge-bases/{kb}/search. */
export const searchRequestSchema = z
  .strictObject({
    query: z
      .string()
      .min(1)
      .refine((query) => new TextEncoder().encode(query).byteLength <= SEARCH_QUERY_MAX_BYTES, {
        message: `query must be at most ${SEARCH_QUERY_MAX_BYTES} bytes`,
      }),
    topK: z.number().int().min(1).max(SEARCH_TOP_K_MAX).default(DEFAULT_SEARCH_TOP_K),
    mode: searchModeSchema.default("hybrid"),
    filter: metadataFilterSchema.optional(),
  })
  .meta({ id: "SearchRequest" });
export type SearchRequest = z.input<typeof searchRequestSchema>;
export type ParsedSearchRequest = z.output<typeof searchRequestSchema>;

export const searchHitSchema = z
  .object({
    chunkId: uuidSchema,
    documentId: uuidSchema,
    filename: z.string(),
    text: z.string(),
    score: z.number().meta({
      description:
        "hybrid: the reciprocal-rank-fusion score; vector: cosine similarity; keyword: the full-text rank (higher is better).",
    }),
    metadata: metadataSchema,
  })
  .meta({ id: "SearchHit" });
export type SearchHit = z.infer<typeof searchHitSchema>;

export const searchResponseSchema = z
  .object({ items: z.array(searchHitSchema) })
  .meta({ id: "SearchResponse" });
export type SearchResponse = z.infer<typeof searchResponseSchema>;

/** Query of GET …/documents. */
export const documentListQuerySchema = z.strictObject({
  status: documentStatusSchema.optional(),
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export const knowledgeBaseListQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

// ------------------------------------------------------------------ tRPC inputs

export const knowledgeBaseRefInputSchema = z.object({ knowledgeBase: slugSchema });
export const documentRefInputSchema = z.object({ knowledgeBase: slugSchema, id: uuidSchema });
export const documentListInputSchema = z.object({
  knowledgeBase: slugSchema,
  status: documentStatusSchema.optional(),
  cursor: z.string().max(200).nullish(),
  limit: z.number().int().min(1).max(200).default(50),
});
/** tRPC `knowledgeBase.addText` (files go over REST multipart). */
export const addDocumentInputSchema = addDocumentJsonRequestSchema.extend({ knowledgeBase: slugSchema });
export const searchInputSchema = z.object({ knowledgeBase: slugSchema, request: searchRequestSchema });
