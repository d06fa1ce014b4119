import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ExtractionError } from "../ports.ts";
import { createTextExtractor, DOCX_MEDIA_TYPE, extractText } from "./index.ts";
import { MAX_PDF_PAGES } from "./pdf.ts";

const FIXTURES = join(import.meta.dir, "../../../../../tests/fixtures/knowledge");
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));

const failure = async (promise: Promise<unknown>): Promise<ExtractionError> => {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ExtractionError);
    return error as ExtractionError;
  }
  throw new Error("expected an ExtractionError");
};

describe("PDF", () => {
  test("reads every page's text and counts the pages", async () => {
    const { text, pages } = await extractText(fixture("handbook.pdf"), "application/pdf");
    expect(pages).toBe(3);
    expect(text).toContain("The vacation policy grants 27 days of paid leave per year.");
    expect(text).toContain("Remote work is allowed on Tuesdays and Thursdays");
    expect(text).toContain("The security badge must be returned within 3 days");
    // Pages in order, a blank line between them.
    expect(text.indexOf("27 days")).toBeLessThan(text.indexOf("Tuesdays"));
    expect(text).toContain("March.\n\nChapter 2");
  });

  test("a scanned PDF (image only) says it needs OCR", async () => {
    const error = await failure(extractText(fixture("scanned.pdf"), "application/pdf"));
    expect(error.message).toBe("the PDF has no text layer (a scanned document?); run OCR first");
  });

  test("a PDF that does not parse says so", async () => {
    const error = await failure(extractText(fixture("broken.pdf"), "application/pdf"));
    expect(error.message).toStartWith("could not read the PDF: ");
  });

  test("a PDF of more pages than the limit fails at once, saying so", async () => {
    const { textPdf } = await import("../../../../../tests/fixtures/knowledge/generate.ts");
    const pages = Array.from({ length: MAX_PDF_PAGES + 1 }, (_, n) => [`page ${n}`]);
    const error = await failure(extractText(textPdf(pages), "application/pdf"));
    expect(error.message).toBe(
      `the PDF has ${MAX_PDF_PAGES + 1} pages, more than the limit of ${MAX_PDF_PAGES}; split it into smaller files`,
    );
  });

  test("the caller's bytes stay usable (pdf.js gets a copy)", async () => {
    const bytes = fixture("handbook.pdf");
    await extractText(bytes, "application/pdf");
    expect(bytes.length).toBeGreaterThan(1000);
    expect(bytes[0]).toBe(0x25);
  });
});

describe("DOCX", () => {
  test("reads the paragraphs", async () => {
    const { text, pages } = await extractText(fixture("policies.docx"), DOCX_MEDIA_TYPE);
    expect(text).toContain("Expense reports are due on the 5th business day of each month.");
    expect(text).toContain("Travel must be booked through the internal portal.");
    expect(pages).toBeUndefined();
  });

  test("a zip bomb (1 GiB inside 1 MB) stops at the cap without inflating it", async () => {
    const bomb = fixture("bomb.docx");
    expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
    const before = process.memoryUsage().rss;
    const started = performance.now();
    const error = await failure(extractText(bomb, DOCX_MEDIA_TYPE));
    console.log(`zip bomb refused in ${(performance.now() - started).toFixed(0)} ms`);
    expect(error.message).toBe("the DOCX expands to more than 50 MB (a zip bomb?)");
    // Counted in slices, kept nowhere: far from the 1 GiB it would take.
    expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1024 * 1024);
  });

  test("a zip without word/document.xml is not a Word document", async () => {
    const error = await failure(extractText(fixture("not-word.docx"), DOCX_MEDIA_TYPE));
    expect(error.message).toBe("not a Word document: the file has no word/document.xml");
  });

  test("bytes that are no zip at all", async () => {
    const error = await failure(
      extractText(new TextEncoder().encode("PK\u0003\u0004 and then nothing"), DOCX_MEDIA_TYPE),
    );
    expect(error.message).toStartWith("not a Word document: the zip archive is damaged");
  });
});

describe("text types", () => {
  test("plain text: UTF-8 with the byte order mark dropped", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("Grüße aus Köln")]);
    expect((await extractText(bytes, "text/plain")).text).toBe("Grüße aus Köln");
  });

  test("invalid UTF-8 is refused, not garbled", async () => {
    const latin1 = new Uint8Array([0x47, 0x72, 0xfc, 0xdf, 0x65]); // "Grüße" in Latin-1
    const error = await failure(extractText(latin1, "text/plain"));
    expect(error.message).toContain("not valid UTF-8");
  });

  test("Markdown keeps its text and drops the front matter", async () => {
    const { text } = await extractText(fixture("notes.md"), "text/markdown");
    expect(text).toStartWith("# Onboarding notes");
    expect(text).toContain("New hires receive a laptop on their first day.");
    expect(text).toContain("- Standup is at 9:30 every weekday.");
    expect(text).not.toContain("tags:");
  });

  test("Markdown without front matter is unchanged", async () => {
    const source = "Intro\n\n---\n\nAfter a rule\n\n---\n";
    expect((await extractText(new TextEncoder().encode(source), "text/markdown")).text).toBe(source);
  });

  test("HTML: lists, tables, line breaks, entities and preformatted text", async () => {
    const html = `<div><h2>Menu &amp; prices</h2><ul><li>Coffee<li>Tea &eacute;t&eacute;</ul>
      <table><tr><th>Item</th><th>Price</th></tr><tr><td>Cake</td><td>3 &euro;</td></tr></table>
      <p>Line one<br>Line two</p><pre>keep   these
   spaces</pre><template><p>hidden</p></template><svg><text>vector</text></svg></div>`;
    const { text } = await extractText(new TextEncoder().encode(html), "text/html");
    expect(text).toBe(
      "Menu & prices\n\n- Coffee\n- Tea été\n\nItem Price\nCake 3 €\n\nLine one\nLine two\n\nkeep   these\n   spaces",
    );
  });

  test("HTML: a large page is extracted in slices, quickly", async () => {
    const section = (i: number) =>
      `<h2>Section ${i}</h2><p>Paragraph <b>${i}</b> with <a href="/x">a link</a>.</p>`;
    const html = `<html><body>${Array.from({ length: 40_000 }, (_, i) => section(i)).join("")}</body></html>`;
    const started = performance.now();
    const { text } = await extractText(new TextEncoder().encode(html), "text/html");
    console.log(
      `${(html.length / 1e6).toFixed(1)} MB of HTML in ${(performance.now() - started).toFixed(0)} ms`,
    );
    expect(text).toContain("Section 39999\n\nParagraph 39999 with a link.");
    expect(text.split("\n\n")).toHaveLength(80_000);
  });

  test("HTML: headings and paragraphs as lines, no script, style or link targets", async () => {
    const { text } = await extractText(fixture("page.html"), "text/html");
    expect(text).toStartWith("Parking rules\n\nVisitors park");
    expect(text).toContain("Visitors park on level 2 of the garage.");
    expect(text).toContain("Bicycles go in the racks by the entrance.");
    expect(text).not.toContain("do-not-index");
    expect(text).not.toContain("color: red");
    expect(text).not.toContain("/racks");
    expect(text).not.toContain("Enable scripts");
  });
});

test("text past maxExtractedChars fails the document", async () => {
  const extract = createTextExtractor({ maxExtractedChars: 100 });
  const error = await failure(extract(new TextEncoder().encode("x".repeat(101)), "text/plain"));
  expect(error.message).toContain("more than the 100 allowed");
  expect((await extract(new TextEncoder().encode("x".repeat(100)), "text/plain")).text).toHaveLength(100);
});
