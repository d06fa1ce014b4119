import type { ExtractedText } from "../ports.ts";
import { decodeUtf8 } from "./plain.ts";

const heading = (selector: string) => ({ selector, options: { uppercase: false } });

/** html-to-text options: no line wrapping, no link targets or images, headings as written. */
const OPTIONS = {
  wordwrap: false as const,
  selectors: [
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map(heading),
    { selector: "a", options: { ignoreHref: true } },
    { selector: "img", format: "skip" },
    { selector: "script", format: "skip" },
    { selector: "style", format: "skip" },
    { selector: "noscript", format: "skip" },
    { selector: "template", format: "skip" },
    { selector: "head", format: "skip" },
    { selector: "table", options: { uppercaseHeaderCells: false } },
  ],
};

let toText: ((html: string) => string) | undefined;

/** The page's readable text: headings and paragraphs as lines, scripts and styles dropped. */
export async function extractHtml(content: Uint8Array): Promise<ExtractedText> {
  // Loaded on first use, as the other readers: a server that never ingests HTML does not pay for it.
  toText ??= (await import("html-to-text")).compile(OPTIONS);
  return { text: toText(decodeUtf8(content)) };
}
