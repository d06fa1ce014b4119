/**
 * Chunking by tokens (docs/KNOWLEDGE.md, "Chunking"): the text is cut into units (sentences of
 * lines of paragraphs; an over-long sentence into runs of words), units are packed into chunks of
 * at most `maxTokens` o200k_base tokens, and each chunk after the first starts with the previous
 * chunk's last units (about `overlap` tokens, whole sentences where they fit, else trailing
 * words). Deterministic: the same text and settings give the same chunks.
 */
import type { Chunking } from "@promptrun/contract";
import type { Chunker, TextChunk } from "../ports.ts";

type O200k = typeof import("gpt-tokenizer/encoding/o200k_base");
let loaded: O200k | undefined;
/** Loaded on first use: the encoding's tables take ~0.5 s to load, which a server not chunking need not pay. */
const o200k = (): O200k => {
  loaded ??= require("gpt-tokenizer/encoding/o200k_base") as O200k;
  return loaded;
};
/** o200k_base tokens of the text (encode().length: cheaper per call than the library's countTokens). */
export const countTokens = (text: string): number => o200k().encode(text).length;

/**
 * Characters per token above which text is not counted whole: BPE is quadratic in the length of
 * one pre-token piece (a run of emoji or letters without spaces), so such text is cut first.
 */
const CHARS_PER_TOKEN_BOUND = 4;

interface Unit {
  text: string;
  tokens: number;
  /** What joins it to the unit before it in a chunk. */
  separator: "\n\n" | "\n" | " " | "";
}

const sentences = new Intl.Segmenter("en", { granularity: "sentence" });

/** Paragraphs (blank-line separated) of lines, horizontal whitespace collapsed, empty ones dropped. */
export function normaliseText(text: string): string[][] {
  return text
    .replace(/\r\n?/g, "\n")
    .split(/\n[ \t\f\v\u00a0]*\n\s*/)
    .map((paragraph) =>
      paragraph
        .split("\n")
        .map((line) => line.replace(/[^\S\n]+/g, " ").trim())
        .filter((line) => line.length > 0),
    )
    .filter((lines) => lines.length > 0);
}

/** Where to cut text near `at` without splitting a surrogate pair. */
const safeCut = (text: string, at: number): number =>
  at > 0 && at < text.length && /[\uD800-\uDBFF]/.test(text.charAt(at - 1)) ? at - 1 : at;

/** Halves text by characters until each half is within `limit` tokens (CJK, emoji: several tokens a character). */
function pushFitting(text: string, limit: number, pieces: Piece[]): void {
  const middle = safeCut(text, Math.floor(text.length / 2));
  const tokens = countTokens(text);
  if (middle <= 0 || tokens <= limit) {
    pieces.push({ text, tokens, separator: pieces.length > 0 ? "" : " " });
    return;
  }
  pushFitting(text.slice(0, middle), limit, pieces);
  pushFitting(text.slice(middle), limit, pieces);
}

/**
 * Cuts one word (no spaces) of more than `limit` tokens into slices of `limit` characters (BPE on
 * one huge piece is slow; a character is at least one token's worth of text), halving a slice that
 * still has too many tokens. The slices join again without a space.
 */
function cutWord(word: string, limit: number): Piece[] {
  const pieces: Piece[] = [];
  for (let at = 0; at < word.length; ) {
    const end = Math.max(safeCut(word, Math.min(word.length, at + limit)), at + 1);
    pushFitting(word.slice(at, end), limit, pieces);
    at = end;
  }
  return pieces;
}

interface Piece {
  text: string;
  tokens: number;
  /** What joins it to the piece before it: a space between words, nothing inside a cut word. */
  separator: " " | "";
}

/**
 * Splits a sentence of more than `limit` tokens into runs of words of at most `limit` tokens.
 * Counted word by word (a word with its leading space is its own BPE piece), then checked whole.
 */
function cutSentence(sentence: string, limit: number): Piece[] {
  const pieces: Piece[] = [];
  let words: string[] = [];
  let tokens = 0;
  const flush = () => {
    // The per-word sum is exact in practice; if not, move words to the next piece until it fits.
    const carry: string[] = [];
    let text = words.join(" ");
    let exact = countTokens(text);
    while (words.length > 1 && exact > limit) {
      carry.unshift(words.pop() as string);
      text = words.join(" ");
      exact = countTokens(text);
    }
    if (words.length > 0) pieces.push({ text, tokens: exact, separator: " " });
    words = carry;
    tokens = carry.length > 0 ? countTokens(carry.join(" ")) : 0;
  };
  for (const word of sentence.split(" ")) {
    const huge = word.length > limit * CHARS_PER_TOKEN_BOUND;
    const spaced = huge ? Number.POSITIVE_INFINITY : countTokens(` ${word}`);
    if (huge || (spaced > limit && countTokens(word) > limit)) {
      while (words.length > 0) flush();
      pieces.push(...cutWord(word, limit));
      continue;
    }
    if (words.length > 0 && tokens + spaced > limit) flush();
    tokens += words.length > 0 ? spaced : countTokens(word);
    words.push(word);
  }
  while (words.length > 0) flush();
  return pieces;
}

/** The text as units of at most `limit` tokens each. */
function unitsOf(paragraphs: string[][], limit: number): Unit[] {
  const units: Unit[] = [];
  paragraphs.forEach((lines, paragraphIndex) => {
    lines.forEach((line, lineIndex) => {
      let separator: Unit["separator"] = lineIndex > 0 ? "\n" : paragraphIndex > 0 ? "\n\n" : " ";
      for (const { segment } of sentences.segment(line)) {
        const sentence = segment.trim();
        if (!sentence) continue;
        const long = sentence.length > limit * CHARS_PER_TOKEN_BOUND;
        const tokens = long ? Number.POSITIVE_INFINITY : countTokens(sentence);
        if (tokens <= limit) {
          units.push({ text: sentence, tokens, separator });
        } else {
          for (const [index, piece] of cutSentence(sentence, limit).entries()) {
            const joint = index === 0 ? separator : piece.separator;
            units.push({ text: piece.text, tokens: piece.tokens, separator: joint });
          }
        }
        separator = " ";
      }
    });
  });
  return units;
}

const join = (units: Unit[]): string =>
  units.map((unit, index) => (index === 0 ? unit.text : unit.separator + unit.text)).join("");

/** Upper estimate of a run of units' tokens: a separator adds at most one. */
const estimate = (units: Unit[]): number =>
  units.reduce((sum, unit) => sum + unit.tokens, 0) + units.length - 1;

/** The previous chunk's tail to start the next one with: whole units, else its last words. */
function overlapOf(previous: Unit[], overlap: number): Unit[] {
  if (overlap <= 0) return [];
  const tail: Unit[] = [];
  let tokens = 0;
  for (let index = previous.length - 1; index >= 0; index--) {
    const unit = previous[index] as Unit;
    if (tokens + unit.tokens + (tail.length > 0 ? 1 : 0) > overlap) break;
    tail.unshift(unit);
    tokens += unit.tokens + (tail.length > 1 ? 1 : 0);
  }
  if (tail.length > 0) return tail;
  const last = previous[previous.length - 1];
  if (!last) return [];
  // The last sentence alone is longer than the overlap: its trailing words.
  const words = last.text.split(" ");
  let taken = "";
  for (let index = words.length - 1; index > 0; index--) {
    const candidate = taken ? `${words[index]} ${taken}` : (words[index] as string);
    if (countTokens(candidate) > overlap) break;
    taken = candidate;
  }
  return taken ? [{ text: taken, tokens: countTokens(taken), separator: " " }] : [];
}

/** Packs units into chunks; units ≤ maxTokens − overlap − 1, so a unit fits after any overlap. */
function pack(units: Unit[], maxTokens: number, overlap: number): TextChunk[] {
  const chunks: TextChunk[] = [];
  let next = 0;
  let carried: Unit[] = [];
  while (next < units.length) {
    const fresh: Unit[] = [units[next++] as Unit];
    let estimated = estimate([...carried, ...fresh]);
    if (estimated > maxTokens) {
      carried = [];
      estimated = estimate(fresh);
    }
    while (next < units.length && estimated + 1 + (units[next] as Unit).tokens <= maxTokens) {
      estimated += 1 + (units[next] as Unit).tokens;
      fresh.push(units[next++] as Unit);
    }
    // The estimate is an upper bound in practice; the exact count decides.
    let text = join([...carried, ...fresh]);
    let tokens = countTokens(text);
    while (tokens > maxTokens && (fresh.length > 1 || carried.length > 0)) {
      if (fresh.length > 1) {
        fresh.pop();
        next--;
      } else carried = [];
      text = join([...carried, ...fresh]);
      tokens = countTokens(text);
    }
    chunks.push({ text, tokens });
    carried = next < units.length ? overlapOf([...carried, ...fresh], overlap) : [];
  }
  return chunks;
}

/** Text → chunks of at most `chunking.maxTokens` tokens (never an empty one; none for blank text). */
export const chunkText: Chunker = (text: string, chunking: Chunking): TextChunk[] => {
  const maxTokens = Math.max(1, Math.floor(chunking.maxTokens));
  const overlap = Math.max(0, Math.min(Math.floor(chunking.overlap), Math.floor(maxTokens / 2)));
  const units = unitsOf(normaliseText(text), Math.max(1, maxTokens - overlap - 1));
  return pack(units, maxTokens, overlap);
};
