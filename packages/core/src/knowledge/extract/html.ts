/**
 * HTML → readable text with htmlparser2's streaming parser: block elements (headings, paragraphs,
 * list items, table rows) become lines, invisible elements (script, style, head, …) are dropped,
 * entities decoded. The page is parsed in slices with a pause between them, so a 20 MB page does
 * not hold the event loop (lease renewals, HTTP) for seconds.
 */
import type { ExtractedText } from "../ports.ts";
import { decodeUtf8 } from "./plain.ts";

/** Elements whose content is not text a reader sees. */
const SKIPPED = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "head",
  "title",
  "svg",
  "math",
  "iframe",
  "object",
  "canvas",
  "select",
  "button",
]);
/** Elements that stand apart from what follows by a blank line. */
const PARAGRAPHS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "blockquote",
  "pre",
  "table",
  "ul",
  "ol",
  "dl",
  "figure",
  "hr",
]);
/** Elements that start a new line. */
const LINES = new Set([
  "br",
  "div",
  "li",
  "tr",
  "dt",
  "dd",
  "section",
  "article",
  "header",
  "footer",
  "main",
  "nav",
  "aside",
  "form",
  "figcaption",
  "caption",
  "address",
  "details",
  "summary",
  "label",
  "option",
]);
const CELLS = new Set(["td", "th"]);

const SLICE_CHARS = 256 * 1024;

/** Builds the text: breaks are pending until the next text, so nested blocks give one break, not several. */
class TextCollector {
  private readonly parts: string[] = [];
  private skipping = 0;
  private preformatted = 0;
  /** Newlines owed before the next text: 0, 1 (a line) or 2 (a paragraph). */
  private pending = 0;
  private prefix = "";

  open(name: string): void {
    if (SKIPPED.has(name)) this.skipping++;
    else if (name === "pre") this.preformatted++;
    this.breakFor(name);
    if (name === "li") this.prefix = "- ";
    else if (CELLS.has(name)) this.prefix = this.pending > 0 ? "" : " ";
  }

  close(name: string): void {
    this.breakFor(name);
    if (SKIPPED.has(name)) this.skipping = Math.max(0, this.skipping - 1);
    else if (name === "pre") this.preformatted = Math.max(0, this.preformatted - 1);
  }

  text(raw: string): void {
    if (this.skipping > 0) return;
    const pre = this.preformatted > 0;
    let text = pre ? raw : raw.replace(/\s+/g, " ");
    const atLineStart = this.parts.length === 0 || this.pending > 0;
    if (atLineStart && !pre) text = text.trimStart();
    if (!text) return;
    if (this.pending > 0 && this.parts.length > 0) {
      this.trimTrailingSpace();
      this.parts.push("\n".repeat(this.pending));
    }
    this.pending = 0;
    this.parts.push(this.prefix, text);
    this.prefix = "";
  }

  private trimTrailingSpace(): void {
    const last = this.parts.length - 1;
    if (this.preformatted === 0 && last >= 0) this.parts[last] = (this.parts[last] as string).trimEnd();
  }

  private breakFor(name: string): void {
    if (PARAGRAPHS.has(name)) this.pending = 2;
    else if (LINES.has(name)) this.pending = Math.max(this.pending, 1);
  }

  result(): string {
    this.trimTrailingSpace();
    return this.parts.join("");
  }
}

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The page's readable text: headings and paragraphs as lines, scripts and styles dropped. */
export async function extractHtml(content: Uint8Array): Promise<ExtractedText> {
  // Loaded on first use, as the other readers: a server that never ingests HTML does not pay for it.
  const { Parser } = await import("htmlparser2");
  const collector = new TextCollector();
  const parser = new Parser(
    {
      onopentagname: (name) => collector.open(name),
      onclosetag: (name) => collector.close(name),
      ontext: (text) => collector.text(text),
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  const html = decodeUtf8(content);
  for (let at = 0; at < html.length; at += SLICE_CHARS) {
    parser.write(html.slice(at, at + SLICE_CHARS));
    if (at + SLICE_CHARS < html.length) await pause();
  }
  parser.end();
  return { text: collector.result() };
}
