/** Embedding models (docs/KNOWLEDGE.md, "Embedding models"). */
export { createDevHashModel, DEV_HASH_DIMENSIONS, DEV_HASH_REF, devHashVector } from "./dev-hash.ts";
export { addCosts, embeddingCost, embeddingPricePerMillion } from "./embedding-price.ts";
export {
  createEmbeddingModelResolver,
  type EmbeddingConfig,
  type EmbeddingResolverOptions,
  validateEmbeddingModelRef,
} from "./resolve-embedding-model.ts";
