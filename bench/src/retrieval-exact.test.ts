import { describe, expect, test } from "bun:test";
import {
  markdownDocument,
  normalised,
  perturbed,
  seededRandom,
  vocabulary,
  ZipfWords,
} from "./retrieval-corpus.ts";
import { bruteForceTopK, percentile, recallAgainstReference } from "./retrieval-exact.ts";

const DIMENSIONS = 8;

function matrix(rows: number, random: () => number): Float32Array {
  const vectors = new Float32Array(rows * DIMENSIONS);
  for (let row = 0; row < rows; row++) {
    const vector = normalised(Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5));
    vectors.set(vector, row * DIMENSIONS);
  }
  return vectors;
}

describe("bruteForceTopK", () => {
  test("is the top k of a full sort", () => {
    const random = seededRandom(7);
    const vectors = matrix(500, random);
    const query = normalised(Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5));
    const all = Array.from({ length: 500 }, (_, index) => {
      let score = 0;
      for (let column = 0; column < DIMENSIONS; column++)
        score += vectors[index * DIMENSIONS + column]! * query[column]!;
      return { index, score };
    }).sort((a, b) => b.score - a.score);
    expect(bruteForceTopK(vectors, DIMENSIONS, query, 10)).toEqual(all.slice(0, 10));
  });
});

describe("recallAgainstReference", () => {
  const random = seededRandom(11);
  const vectors = matrix(200, random);
  const query = normalised(Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5));
  const reference = bruteForceTopK(vectors, DIMENSIONS, query, 5);
  const ids = Array.from({ length: 200 }, (_, index) => `c${index}`);
  const rowOf = new Map(ids.map((id, index) => [id, index]));

  test("the exact answer has recall 1 and no score error", () => {
    const hits = reference.map((entry) => ({ chunkId: ids[entry.index]!, score: entry.score }));
    expect(recallAgainstReference(hits, reference, rowOf, vectors, DIMENSIONS, query)).toEqual({
      recall: 1,
      maxScoreError: 0,
    });
  });

  test("a missed neighbour lowers recall; a wrong score shows as score error", () => {
    const worst = bruteForceTopK(vectors, DIMENSIONS, query, 200).at(-1)!;
    const hits = reference
      .slice(0, 4)
      .map((entry) => ({ chunkId: ids[entry.index]!, score: entry.score }))
      .concat({ chunkId: ids[worst.index]!, score: worst.score + 0.5 });
    const check = recallAgainstReference(hits, reference, rowOf, vectors, DIMENSIONS, query);
    expect(check.recall).toBe(0.8);
    expect(check.maxScoreError).toBeCloseTo(0.5, 5);
  });
});

describe("corpus", () => {
  test("is deterministic for a seed and long enough", () => {
    const make = () => {
      const random = seededRandom(3);
      const words = new ZipfWords(vocabulary(500, random), random);
      return markdownDocument(words, random, 3_000);
    };
    expect(make()).toBe(make());
    expect(make().length).toBeGreaterThanOrEqual(3_000);
    expect(make()).toStartWith("# ");
  });

  test("perturbed vectors stay unit length and near their base", () => {
    const random = seededRandom(5);
    const base = normalised(Float32Array.from({ length: 256 }, () => random() - 0.5));
    const moved = perturbed(base, 0.3, random);
    let length = 0;
    let cosine = 0;
    for (let index = 0; index < 256; index++) {
      length += moved[index]! ** 2;
      cosine += moved[index]! * base[index]!;
    }
    expect(length).toBeCloseTo(1, 5);
    expect(cosine).toBeGreaterThan(0.8);
    expect(cosine).toBeLessThan(1);
  });

  test("percentile is nearest-rank", () => {
    const values = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([], 50)).toBeNaN();
  });
});
