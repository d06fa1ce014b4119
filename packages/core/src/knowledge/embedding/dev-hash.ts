/**
 * `dev:hash` (docs/KNOWLEDGE.md, "Embedding models"): a deterministic local embedding for keyless
 * use, the demo and tests. Feature hashing of lower-cased words and word bigrams into 256
 * dimensions, sublinear term frequency, L2-normalised: texts sharing words score a higher cosine.
 * No network, no key, no cost; it knows no synonyms.
 */
import type { EmbeddingModel } from "../ports.ts";

export const DEV_HASH_REF = "dev:hash";
export const DEV_HASH_DIMENSIONS = 256;
/** Bigrams count half as much as words: a shared phrase adds to a shared word, it does not dominate. */
const BIGRAM_WEIGHT = 0.5;

/** FNV-1a, 32-bit, over UTF-16 code units: stable across runs and platforms. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Lower-cased runs of unicode letters and digits (NFKC first, so ligatures and widths agree). */
export const wordsOf = (text: string): string[] =>
  text
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

/** The text's vector: zero (cosine 0 with anything) when it has no words. */
export function devHashVector(text: string): Float32Array {
  const words = wordsOf(text);
  const counts = new Map<string, number>();
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as string;
    counts.set(word, (counts.get(word) ?? 0) + 1);
    // "\u0001" never occurs in a word: a bigram cannot collide with a word's own hash input.
    if (index > 0) {
      const bigram = `${words[index - 1]}\u0001${word}`;
      counts.set(bigram, (counts.get(bigram) ?? 0) + 1);
    }
  }
  const vector = new Float32Array(DEV_HASH_DIMENSIONS);
  for (const [feature, count] of counts) {
    const hash = fnv1a(feature);
    // Low bits pick the dimension, the top bit the sign (collisions then cancel out on average).
    const sign = hash >>> 31 === 1 ? -1 : 1;
    const weight = (1 + Math.log(count)) * (feature.includes("\u0001") ? BIGRAM_WEIGHT : 1);
    vector[hash % DEV_HASH_DIMENSIONS] = (vector[hash % DEV_HASH_DIMENSIONS] as number) + sign * weight;
  }
  return normalise(vector);
}

/** Scales to length 1 in place (a zero vector stays zero). */
export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index] = (vector[index] as number) * scale;
  return vector;
}

export function createDevHashModel(): EmbeddingModel {
  return {
    ref: DEV_HASH_REF,
    async embed(texts, options) {
      options?.signal?.throwIfAborted();
      return {
        vectors: texts.map(devHashVector),
        tokens: texts.reduce((sum, text) => sum + wordsOf(text).length, 0),
        cost: { total: 0, priced: true },
      };
    },
  };
}
