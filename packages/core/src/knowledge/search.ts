import type { MetadataFilter, ParsedSearchRequest, SearchHit } from "@promptrun/contract";
import { notFound, PromptrunError } from "../errors.ts";
import {
  type DocumentCost,
  EmbeddingError,
  type EmbeddingModelResolver,
  type KnowledgeBaseRecord,
  type KnowledgeSearch,
  type KnowledgeStore,
  type SearchOutcome,
} from "./ports.ts";
import { createVectorIndex, type VectorIndex } from "./vector-index.ts";

/** Reciprocal rank fusion constant (docs/KNOWLEDGE.md "Search"). */
export const RRF_K = 60;
/** Each list hybrid fuses is fetched this deep at least (and topK × 4 when deeper). */
export const HYBRID_MIN_CANDIDATES = 50;

export const hybridCandidates = (topK: number): number => Math.max(topK * 4, HYBRID_MIN_CANDIDATES);

const FREE: DocumentCost = { total: 0, priced: true };

interface Ranked {
  chunkId: string;
  score: number;
}

/**
 * Reciprocal rank fusion: each chunk scores Σ 1 / (k + rank) over the lists it is in (rank from 1).
 * Ties keep the order of first appearance (keyword list first), so results are stable.
 */
export function reciprocalRankFusion(lists: Array<Array<{ chunkId: string }>>, k = RRF_K): Ranked[] {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.forEach((item, index) => {
      scores.set(item.chunkId, (scores.get(item.chunkId) ?? 0) + 1 / (k + index + 1));
    });
  }
  return [...scores.entries()]
    .map(([chunkId, score]) => ({ chunkId, score }))
    .sort((a, b) => b.score - a.score);
}

/** L2-normalised copy (the stored vectors are normalised, so cosine is the dot product). */
export function normalized(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(vector.length);
  if (norm === 0) return out;
  for (let index = 0; index < vector.length; index++) out[index] = (vector[index] as number) / norm;
  return out;
}

export interface KnowledgeSearchDependencies {
  store: KnowledgeStore;
  resolveEmbeddingModel: EmbeddingModelResolver;
  /** Shared with nothing else by default; tests pass their own to watch reloads. */
  vectorIndex?: VectorIndex;
}

/**
 * Keyword, vector and hybrid search over a tenant's knowledge base (docs/KNOWLEDGE.md "Search").
 * The service's search, the engine's `retrieval:` and the knowledge_base tool all call this.
 */
/** KnowledgeSearch, plus dropping a deleted knowledge base's vectors from memory. */
export interface KnowledgeSearchEngine extends KnowledgeSearch {
  forget(knowledgeBaseId: string): void;
}

export function createKnowledgeSearch(dependencies: KnowledgeSearchDependencies): KnowledgeSearchEngine {
  const { store, resolveEmbeddingModel } = dependencies;
  const index = dependencies.vectorIndex ?? createVectorIndex({ store });

  const embedQuery = async (base: KnowledgeBaseRecord, query: string) => {
    try {
      const model = resolveEmbeddingModel(base.embeddingModel);
      const result = await model.embed([query]);
      const vector = result.vectors[0];
      if (!vector) throw new EmbeddingError(`${base.embeddingModel} returned no vector for the query`);
      return { vector: normalized(vector), cost: result.cost, tokens: result.tokens };
    } catch (error) {
      if (error instanceof EmbeddingError) {
        throw new PromptrunError(
          "unavailable",
          `could not embed the query with ${base.embeddingModel}: ${error.message}`,
          { cause: error },
        );
      }
      throw error;
    }
  };

  const vectorList = async (
    base: KnowledgeBaseRecord,
    vector: Float32Array,
    limit: number,
    filter?: MetadataFilter,
  ) => {
    const documents =
      filter === undefined ? undefined : new Set(await store.matchingDocumentIds(base.id, filter));
    if (documents !== undefined && documents.size === 0) return [];
    return index.search(base.id, vector, limit, documents);
  };

  /** The hits in the ranked order; chunks deleted since they were ranked are left out. */
  const hydrate = async (base: KnowledgeBaseRecord, ranked: Ranked[]): Promise<SearchHit[]> => {
    if (ranked.length === 0) return [];
    const views = new Map(
      (
        await store.getChunks(
          base.id,
          ranked.map((item) => item.chunkId),
        )
      ).map((view) => [view.chunkId, view]),
    );
    return ranked.flatMap((item) => {
      const view = views.get(item.chunkId);
      return view ? [{ ...view, score: item.score }] : [];
    });
  };

  const run = async (base: KnowledgeBaseRecord, request: ParsedSearchRequest): Promise<SearchOutcome> => {
    const { query, topK, mode, filter } = request;
    if (mode === "keyword") {
      const ranked = await store.keywordSearch(base.id, query, topK, filter);
      return { hits: await hydrate(base, ranked), cost: { ...FREE }, tokens: 0 };
    }
    const embedded = await embedQuery(base, query);
    if (mode === "vector") {
      const ranked = await vectorList(base, embedded.vector, topK, filter);
      return { hits: await hydrate(base, ranked), cost: embedded.cost, tokens: embedded.tokens };
    }
    const depth = hybridCandidates(topK);
    const [keyword, vector] = await Promise.all([
      store.keywordSearch(base.id, query, depth, filter),
      vectorList(base, embedded.vector, depth, filter),
    ]);
    const fused = reciprocalRankFusion([keyword, vector]).slice(0, topK);
    return { hits: await hydrate(base, fused), cost: embedded.cost, tokens: embedded.tokens };
  };

  return {
    forget: (knowledgeBaseId) => index.forget(knowledgeBaseId),
    async search(tenantId, slug, request) {
      const base = await store.getKnowledgeBase(tenantId, slug);
      if (!base) throw notFound(`knowledge base '${slug}' not found`);
      return run(base, request);
    },
    async chunks(tenantId, slug, chunkIds) {
      if (chunkIds.length === 0) return [];
      const base = await store.getKnowledgeBase(tenantId, slug);
      return base ? store.getChunks(base.id, chunkIds) : [];
    },
  };
}
