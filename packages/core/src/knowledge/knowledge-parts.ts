import type { MediaTypeDetector } from "./knowledge-service.ts";
import {
  type Chunker,
  EmbeddingError,
  type EmbeddingModelResolver,
  ExtractionError,
  type TextExtractor,
} from "./ports.ts";

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
 * Stand-ins until the real parts are wired (TODO(integrator): createPromptrun should default to
 * the extraction/chunking/embedding/detection of `knowledge/extract`, `chunking`, `embedding`):
 * every document fails with a message saying so, every upload is 415.
 */
export const unwiredKnowledgeParts: KnowledgeParts = {
  extract: async () => {
    throw new ExtractionError("text extraction is not configured on this server");
  },
  chunk: () => {
    throw new ExtractionError("chunking is not configured on this server");
  },
  resolveEmbeddingModel: (ref) => {
    throw new EmbeddingError(`no embedding models are configured on this server (asked for ${ref})`);
  },
  detectMediaType: () => null,
};
