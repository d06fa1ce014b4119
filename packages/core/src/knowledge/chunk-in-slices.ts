import type { Chunking } from "@promptrun/contract";
import type { Chunker, TextChunk } from "./ports.ts";

/** Characters chunked between two yields to the event loop (~25 ms of tokenizer work). */
export const SLICE_CHARS = 64 * 1024;

/**
 * Chunks a long text a slice at a time, yielding to the event loop between slices, so a
 * 10-million-character document never holds the server's thread for seconds (the tokenizer is
 * synchronous, ~0.4 s per MB). Slices end at a paragraph break where there is one (else a line
 * break, else a space), so chunks never straddle two slices; overlap stays within a slice
 * (docs/KNOWLEDGE.md "Chunking").
 */
export async function chunkInSlices(
  chunk: Chunker,
  text: string,
  chunking: Chunking,
  sliceChars = SLICE_CHARS,
): Promise<TextChunk[]> {
  if (text.length <= sliceChars) return chunk(text, chunking);
  const chunks: TextChunk[] = [];
  let start = 0;
  while (start < text.length) {
    const end = sliceEnd(text, start, sliceChars);
    chunks.push(...chunk(text.slice(start, end), chunking));
    start = end;
    if (start < text.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return chunks;
}

function sliceEnd(text: string, start: number, sliceChars: number): number {
  const limit = start + sliceChars;
  if (limit >= text.length) return text.length;
  const floor = start + Math.floor(sliceChars / 2);
  for (const separator of ["\n\n", "\n", " "]) {
    const at = text.lastIndexOf(separator, limit);
    if (at >= floor) return at + separator.length;
  }
  return limit;
}
