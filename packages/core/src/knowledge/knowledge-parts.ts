import type { PromptrunConfig } from "../config.ts";
import { chunkText } from "./chunking/chunk-text.ts";
import { createEmbeddingModelResolver, validateEmbeddingModelRef } from "./embedding/index.ts";
import { createTextExtractor, detectMediaType } from "./extract/index.ts";
import type { MediaTypeDetector } from "./knowledge-service.ts";
import type { Chunker, EmbeddingModelResolver, TextExtractor } from "./ports.ts";

/** What knowledge bases need besides the store: extraction, chunking, embedding, type detection. */
export interface KnowledgeParts {
  extract: TextExtractor;
  chunk: Chunker;
  resolveEmbeddingModel: EmbeddingModelResolver;
  detectMediaType: MediaTypeDetector;
  /** Checks a knowledge base's `provider:model` at creation; default: resolving it (EmbeddingError when unknown or without credentials). */
  validateEmbeddingModel?: (ref: string) => void | Promise<void>;
}

/**
 * The server's parts: text extraction (extract/), token chunking (chunking/), embedding models
 * through the configured providers and `dev:hash` (embedding/), and media-type detection.
 */
export function createKnowledgeParts(config: PromptrunConfig, fetchImpl?: typeof fetch): KnowledgeParts {
  return {
    extract: createTextExtractor({ maxExtractedChars: config.knowledge.maxExtractedChars }),
    chunk: chunkText,
    resolveEmbeddingModel: createEmbeddingModelResolver({
      config,
      ...(fetchImpl !== undefined ? { fetch: fetchImpl } : {}),
    }),
    validateEmbeddingModel: (ref) => validateEmbeddingModelRef(ref, config),
    detectMediaType: (upload) => detectMediaType(upload).mediaType,
  };
}
