import type { ExtractedText } from "../ports.ts";
import { decodeUtf8 } from "./plain.ts";

/** `---` YAML front matter at the very start: metadata for a site generator, noise for search. */
const FRONT_MATTER = /^---[ \t]*\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/;

/** Markdown reads well as it is (headings, lists): only the front matter goes. */
export function extractMarkdown(content: Uint8Array): ExtractedText {
  return { text: decodeUtf8(content).replace(FRONT_MATTER, "") };
}
