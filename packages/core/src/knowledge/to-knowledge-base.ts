import type { KnowledgeBase } from "@promptrun/contract";
import type { KnowledgeBaseView } from "./ports.ts";

/** A knowledge base as REST and tRPC present it (`knowledgeBaseSchema`). */
export const toKnowledgeBase = (view: KnowledgeBaseView): KnowledgeBase => ({
  id: view.id,
  slug: view.slug,
  description: view.description,
  embeddingModel: view.embeddingModel,
  chunking: { maxTokens: view.chunking.maxTokens, overlap: view.chunking.overlap },
  documentCount: view.documentCount,
  chunkCount: view.chunkCount,
  bytes: view.bytes,
  createdAt: view.createdAt.toISOString(),
});
