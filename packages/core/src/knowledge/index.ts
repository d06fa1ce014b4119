export { documentOutboxBuilder } from "./document-events.ts";
export {
  createIngestionWorker,
  INGEST_LEASE_MS,
  INGEST_POLL_MS,
  INGEST_RENEW_MS,
  INTERNAL_INGEST_ERROR,
  type IngestionWorker,
  type IngestionWorkerDependencies,
} from "./ingestion-worker.ts";
export {
  createKnowledgeService,
  type KnowledgeServiceDependencies,
  MEDIA_TYPE_HEAD_BYTES,
  type MediaTypeDetector,
} from "./knowledge-service.ts";
export * from "./ports.ts";
export {
  createKnowledgeSearch,
  HYBRID_MIN_CANDIDATES,
  hybridCandidates,
  type KnowledgeSearchDependencies,
  type KnowledgeSearchEngine,
  normalized,
  RRF_K,
  reciprocalRankFusion,
} from "./search.ts";
export { toDocument } from "./to-document.ts";
export { toKnowledgeBase } from "./to-knowledge-base.ts";
export { createVectorIndex, type VectorIndex, type VectorMatch } from "./vector-index.ts";
