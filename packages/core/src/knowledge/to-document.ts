import type { KnowledgeDocument } from "@promptrun/contract";
import type { DocumentRecord } from "./ports.ts";

/** A document as REST, tRPC and the document.ready/failed webhooks present it (`knowledgeDocumentSchema`). */
export const toDocument = (record: DocumentRecord): KnowledgeDocument => ({
  id: record.id,
  knowledgeBase: record.knowledgeBaseSlug,
  externalId: record.externalId,
  filename: record.filename,
  mediaType: record.mediaType,
  metadata: record.metadata,
  status: record.status,
  error: record.error,
  bytes: record.bytes,
  chunkCount: record.chunkCount,
  tokens: record.tokens,
  cost: record.cost === null ? null : { total: record.cost.total, priced: record.cost.priced },
  createdAt: record.createdAt.toISOString(),
  readyAt: record.readyAt === null ? null : record.readyAt.toISOString(),
});
