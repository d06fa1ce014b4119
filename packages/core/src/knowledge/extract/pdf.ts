import { type ExtractedText, ExtractionError } from "../ports.ts";

type Unpdf = typeof import("unpdf");

/** Pages a PDF may have: past this it fails at once instead of holding an ingestion slot for minutes. */
export const MAX_PDF_PAGES = 5000;

/** pdf.js errors (InvalidPDFException, …) say little on their own; the document's error names the cause. */
async function openPdf(unpdf: Unpdf, content: Uint8Array) {
  try {
    // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
    return await unpdf.getDocumentProxy(new Uint8Array(content), { verbosity: 0 });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExtractionError(`could not read the PDF: ${reason}`);
  }
}

/** The text layer of every page (pdf.js through unpdf), pages separated by a blank line. */
export async function extractPdf(content: Uint8Array): Promise<ExtractedText> {
  // Loaded on first use: a server that never ingests a PDF does not load pdf.js.
  const unpdf = await import("unpdf");
  const pdf = await openPdf(unpdf, content);
  try {
    if (pdf.numPages > MAX_PDF_PAGES) {
      throw new ExtractionError(
        `the PDF has ${pdf.numPages} pages, more than the limit of ${MAX_PDF_PAGES}; split it into smaller files`,
      );
    }
    let pages: string[];
    try {
      pages = (await unpdf.extractText(pdf, { mergePages: false })).text;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ExtractionError(`could not read the PDF: ${reason}`);
    }
    const text = pages.map((page) => page.trim()).join("\n\n");
    if (!/[\p{L}\p{N}]/u.test(text))
      throw new ExtractionError("the PDF has no text layer (a scanned document?); run OCR first");
    return { text, pages: pdf.numPages };
  } finally {
    // Frees pdf.js's worker-side document (this build's proxy has no destroy of its own).
    await pdf.loadingTask.destroy();
  }
}
