/**
 * Synthetic text for the retrieval bench: a seeded vocabulary of pronounceable words drawn with a
 * Zipf distribution (a few frequent words, a long tail, as in real text), assembled into Markdown
 * pages. Deterministic for a seed, so runs compare.
 */

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const CONSONANTS = "bcdfghjklmnprstvz";
const VOWELS = "aeiou";

/** `size` distinct lower-case words of 2–4 syllables. */
export function vocabulary(size: number, random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = "";
    for (let index = 0; index < syllables; index++)
      word +=
        CONSONANTS[Math.floor(random() * CONSONANTS.length)]! + VOWELS[Math.floor(random() * VOWELS.length)]!;
    words.add(word);
  }
  return [...words];
}

/** Draws words with probability ∝ 1 / rank (Zipf, exponent 1). */
export class ZipfWords {
  private readonly cumulative: Float64Array;

  constructor(
    readonly words: string[],
    private readonly random: () => number,
  ) {
    this.cumulative = new Float64Array(words.length);
    let sum = 0;
    for (let rank = 0; rank < words.length; rank++) {
      sum += 1 / (rank + 1);
      this.cumulative[rank] = sum;
    }
  }

  next(): string {
    const target = this.random() * this.cumulative[this.cumulative.length - 1]!;
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return this.words[low]!;
  }

  /**
   * A word of middling frequency (ranks 300 to 5,000: in roughly 0.5–5 % of 128-token chunks), what
   * a search query names; the most frequent words would match most chunks, as stop words do.
   */
  queryWord(): string {
    const top = Math.min(5_000, this.words.length);
    return this.words[300 + Math.floor(this.random() * (top - 300))]!;
  }
}

function sentence(words: ZipfWords, random: () => number): string {
  const length = 8 + Math.floor(random() * 9);
  const picked = Array.from({ length }, () => words.next());
  const first = picked[0]!;
  picked[0] = first[0]!.toUpperCase() + first.slice(1);
  return `${picked.join(" ")}.`;
}

/** A Markdown document of at least `chars` characters: a title, sections and paragraphs. */
export function markdownDocument(words: ZipfWords, random: () => number, chars: number): string {
  const parts = [`# ${sentence(words, random).slice(0, -1)}`];
  let length = parts[0]!.length;
  while (length < chars) {
    const paragraph =
      parts.length % 6 === 1
        ? `## ${words.next()} ${words.next()}`
        : Array.from({ length: 4 + Math.floor(random() * 4) }, () => sentence(words, random)).join(" ");
    parts.push(paragraph);
    length += paragraph.length + 2;
  }
  return parts.join("\n\n");
}

/** Scales to length 1 in place. */
export function normalised(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const scale = sum === 0 ? 0 : 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index] = vector[index]! * scale;
  return vector;
}

/** `base` moved by Gaussian-ish noise of `amount` and renormalised: a near neighbour, not a copy. */
export function perturbed(base: Float32Array, amount: number, random: () => number): Float32Array {
  const vector = new Float32Array(base.length);
  for (let index = 0; index < base.length; index++) {
    const noise = random() + random() + random() - 1.5;
    vector[index] = base[index]! + amount * noise * (1 / Math.sqrt(base.length));
  }
  return normalised(vector);
}
