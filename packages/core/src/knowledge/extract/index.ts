/**
 * Text extraction (docs/KNOWLEDGE.md, "Extraction"): one reader per accepted type. Every failure
 * is an ExtractionError whose message says what to do; the document fails with it.
 */
import type { DocumentMediaType } from "@promptrun/contract";
import { type ExtractedText, ExtractionError, type TextExtractor } from "../ports.ts";
import { DOCX_MEDIA_TYPE } from "./detect-media-type.ts";
import { extractDocx } from "./docx.ts";
import { extractHtml } from "./html.ts";
import { extractMarkdown } from "./markdown.ts";
import { extractPdf } from "./pdf.ts";
import { extractPlain } from "./plain.ts";

export { DOCX_MEDIA_TYPE, detectMediaType } from "./detect-media-type.ts";

export interface TextExtractorOptions {
  /** Characters of text a document may have (config knowledge.maxExtractedChars). */
  maxExtractedChars: number;
}

const READERS: Record<DocumentMediaType, (content: Uint8Array) => ExtractedText | Promise<ExtractedText>> = {
  "text/plain": extractPlain,
  "text/markdown": extractMarkdown,
  "text/html": extractHtml,
  "application/pdf": extractPdf,
  [DOCX_MEDIA_TYPE]: extractDocx,
};

export function createTextExtractor(options: TextExtractorOptions): TextExtractor {
  return async (content, mediaType) => {
    const read = READERS[mediaType];
    if (!read) throw new ExtractionError(`cannot extract text from ${mediaType}`);
    const extracted = await read(content);
    if (extracted.text.length > options.maxExtractedChars)
      throw new ExtractionError(
        `the document has ${extracted.text.length} characters of text, more than the ${options.maxExtractedChars} allowed: split it into smaller documents`,
      );
    return extracted;
  };
}

/** With the default limit (10 million characters). */
export const extractText: TextExtractor = createTextExtractor({ maxExtractedChars: 10_000_000 });
