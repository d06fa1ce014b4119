/**
 * Retrieval as prompts and runs see it (docs/KNOWLEDGE.md): a prompt's `retrieval:`, the searches a
 * run made and the citations of its output. Kept apart from knowledge-base.ts so that run.ts and
 * prompt.ts can import it without a cycle.
 */
import { z } from "zod";
import { slugSchema, uuidSchema } from "./ids.ts";
import { refusingProtoKey } from "./own-keys.ts";

export const SEARCH_TOP_K_MAX = 50;
export const DEFAULT_SEARCH_TOP_K = 5;
/** Bytes of a search query (UTF-8). */
export const SEARCH_QUERY_MAX_BYTES = 4096;
/** Characters of a chunk quoted by a citation. */
export const CITATION_QUOTE_CHARS = 200;

/** `{<metadataKey>: value | {in: [values]}}`: every key must match (AND); a document's array value matches when it contains the value. */
export const metadataFilterSchema = refusingProtoKey(
  z
    .record(
      z.string().min(1).max(64),
      z.union([z.string().max(1000), z.strictObject({ in: z.array(z.string().max(1000)).min(1).max(100) })]),
    )
    .refine((filter) => Object.keys(filter).length <= 20, { message: "filter may name at most 20 keys" })
    .meta({ id: "MetadataFilter" }),
);
export type MetadataFilter = z.infer<typeof metadataFilterSchema>;

export const searchModeSchema = z.enum(["hybrid", "vector", "keyword"]);
export type SearchMode = z.infer<typeof searchModeSchema>;

// ------------------------------------------------------------------ in prompts and runs

/** `retrieval:` of a prompt: searched before the first model call; chunks reach the messages as {{retrieval}}. */
export const retrievalSpecSchema = z.strictObject({
  knowledgeBase: slugSchema,
  /** A template over the prompt's inputs, e.g. "{{question}}". */
  query: z.string().min(1).max(SEARCH_QUERY_MAX_BYTES),
  topK: z.number().int().min(1).max(SEARCH_TOP_K_MAX).optional(),
  mode: searchModeSchema.optional(),
  filter: metadataFilterSchema.optional(),
});
export type RetrievalSpec = z.infer<typeof retrievalSpecSchema>;

export const retrievedChunkSchema = z
  .object({
    n: z
      .number()
      .int()
      .positive()
      .meta({ description: "The chunk's number in {{retrieval}} and in [n] markers." }),
    chunkId: uuidSchema,
    documentId: uuidSchema,
    filename: z.string(),
    score: z.number(),
  })
  .meta({ id: "RetrievedChunk" });
export type RetrievedChunk = z.infer<typeof retrievedChunkSchema>;

/** One search a run made (its prompt's `retrieval`, or a knowledge_base tool call). */
export const runRetrievalSchema = z
  .object({
    knowledgeBase: slugSchema,
    query: z.string(),
    chunks: z.array(retrievedChunkSchema),
  })
  .meta({ id: "RunRetrieval" });
export type RunRetrieval = z.infer<typeof runRetrievalSchema>;

/** One distinct [n] marker of the output that refers to a retrieved chunk. */
export const citationSchema = z
  .object({
    n: z.number().int().positive(),
    chunkId: uuidSchema,
    documentId: uuidSchema,
    filename: z.string(),
    quote: z
      .string()
      .meta({ description: `The start of the chunk (at most ${CITATION_QUOTE_CHARS} characters).` }),
  })
  .meta({ id: "Citation" });
export type Citation = z.infer<typeof citationSchema>;

/** SSE `run.retrieval`: sent before the model's first token (and after each knowledge_base tool search). */
export const runRetrievalEventSchema = z.object({
  runId: uuidSchema,
  knowledgeBase: slugSchema,
  query: z.string(),
  chunks: z.array(retrievedChunkSchema),
});
export type RunRetrievalEvent = z.infer<typeof runRetrievalEventSchema>;
