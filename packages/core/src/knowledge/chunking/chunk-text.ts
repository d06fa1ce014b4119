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
/** o200k_base tokens of the text. */
export const countTokens = (text: string): number => o200k().countTokens(text);
const encode = (text: string): number[] => o200k().encode(text);
const decode = (tokens: number[]): string => o200k().decode(tokens);

interface Unit {
  text: string;
  tokens: number;
  /** What joins it to the unit before it in a chunk. */
  separator: "\n\n" | "\n" | " ";
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

/** Cuts text (one word, no spaces) of more than `limit` tokens by tokens. */
function cutByTokens(word: string, limit: number): string[] {
  const tokens = encode(word);
  const pieces: string[] = [];
  for (let at = 0; at < tokens.length; at += limit) pieces.push(decode(tokens.slice(at, at + limit)));
  return pieces;
}

/** Splits a sentence of more than `limit` tokens into runs of words of at most `limit` tokens. */
function cutSentence(sentence: string, limit: number): string[] {
  const pieces: string[] = [];
  let current = "";
  for (const word of sentence.split(" ")) {
    const candidate = current ? `${current} ${word}` : word;
    if (countTokens(candidate) <= limit) {
      current = candidate;
      continue;
    }
    if (current) pieces.push(current);
    if (countTokens(word) <= limit) current = word;
    else {
      const cut = cutByTokens(word, limit);
      current = cut.pop() ?? "";
      pieces.push(...cut);
    }
  }
  if (current) pieces.push(current);
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
        const tokens = countTokens(sentence);
        const pieces = tokens <= limit ? [sentence] : cutSentence(sentence, limit);
        for (const piece of pieces) {
          units.push({ text: piece, tokens: piece === sentence ? tokens : countTokens(piece), separator });
          separator = " ";
        }
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
