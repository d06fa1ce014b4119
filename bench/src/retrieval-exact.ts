/**
 * The brute-force reference the retrieval bench holds vector search to: every stored vector
 * scored against the query (dot product = cosine, the vectors being L2-normalised), best first.
 */

export interface ScoredChunk {
  index: number;
  score: number;
}

/** The `k` best rows of a row-major `rows × dimensions` matrix for `query`, best first. */
export function bruteForceTopK(
  vectors: Float32Array,
  dimensions: number,
  query: Float32Array,
  k: number,
): ScoredChunk[] {
  const rows = vectors.length / dimensions;
  const best: ScoredChunk[] = [];
  for (let row = 0; row < rows; row++) {
    let score = 0;
    const offset = row * dimensions;
    for (let column = 0; column < dimensions; column++) score += vectors[offset + column]! * query[column]!;
    if (best.length < k || score > best[best.length - 1]!.score) {
      best.push({ index: row, score });
      best.sort((a, b) => b.score - a.score);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

export function dot(vectors: Float32Array, row: number, dimensions: number, query: Float32Array): number {
  let score = 0;
  const offset = row * dimensions;
  for (let column = 0; column < dimensions; column++) score += vectors[offset + column]! * query[column]!;
  return score;
}

export interface RecallCheck {
  /** Share of the reference's top k the search returned; a tie at the k-th score counts as found. */
  recall: number;
  /** Largest |search score − reference score| over the hits: ~1e-7 when the query vector was reproduced. */
  maxScoreError: number;
}

/**
 * Compares a search's hits (chunk ids and scores, best first) with the brute-force reference for
 * the same query vector. `rowOf` maps a chunk id to its row in the matrix.
 */
export function recallAgainstReference(
  hits: Array<{ chunkId: string; score: number }>,
  reference: ScoredChunk[],
  rowOf: Map<string, number>,
  vectors: Float32Array,
  dimensions: number,
  query: Float32Array,
): RecallCheck {
  const k = reference.length;
  if (k === 0) return { recall: hits.length === 0 ? 1 : 0, maxScoreError: 0 };
  const kthScore = reference[k - 1]!.score;
  let found = 0;
  let maxScoreError = 0;
  for (const hit of hits.slice(0, k)) {
    const row = rowOf.get(hit.chunkId);
    if (row === undefined) continue;
    const exact = dot(vectors, row, dimensions, query);
    maxScoreError = Math.max(maxScoreError, Math.abs(exact - hit.score));
    if (exact >= kthScore - 1e-6) found++;
  }
  return { recall: found / k, maxScoreError };
}

/** Nearest-rank percentile of the values (ms). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
