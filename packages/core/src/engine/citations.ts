/**
 * Citations of a run's final output (docs/KNOWLEDGE.md "In prompts"): each distinct `[n]` marker
 * (also `[1, 2]` and `[1][2]`) that names a chunk the run retrieved, in order of first mention;
 * a number no retrieval gave (`[7]` of 2 chunks, `[2024]`) is no citation.
 */
import { CITATION_QUOTE_CHARS, type Citation, type RunRetrieval } from "@promptrun/contract";

/** `[3]` or `[1, 2]` (commas, optional spaces). */
const MARKER = /\[\s*(\d{1,6}(?:\s*,\s*\d{1,6})*)\s*\]/g;

/** The distinct numbers the text's markers name, in order of first appearance. */
export function citedNumbers(text: string): number[] {
  const seen = new Set<number>();
  for (const match of text.matchAll(MARKER))
    for (const part of match[1]!.split(",")) seen.add(Number(part.trim()));
  return [...seen];
}

/** The first CITATION_QUOTE_CHARS characters (code points, never half a surrogate pair). */
const quoteOf = (text: string): string =>
  Array.from(text.slice(0, CITATION_QUOTE_CHARS * 2))
    .slice(0, CITATION_QUOTE_CHARS)
    .join("");

/** One citation per distinct marker of `output` that names a retrieved chunk; `textOf` gives its text ("" when gone). */
export function citationsOf(
  output: string,
  retrieval: readonly RunRetrieval[],
  textOf: (chunkId: string) => string | undefined,
): Citation[] {
  const byNumber = new Map(
    retrieval.flatMap((entry) => entry.chunks.map((chunk) => [chunk.n, chunk] as const)),
  );
  if (byNumber.size === 0) return [];
  const citations: Citation[] = [];
  for (const n of citedNumbers(output)) {
    const chunk = byNumber.get(n);
    if (!chunk) continue;
    const { chunkId, documentId, filename } = chunk;
    citations.push({ n, chunkId, documentId, filename, quote: quoteOf(textOf(chunkId) ?? "") });
  }
  return citations;
}
