/** Embedding models (docs/KNOWLEDGE.md, "Embedding models"). */
export {
  createEmbeddingModelResolver,
  validateEmbeddingModelRef,
} from "./resolve-embedding-model.ts";
