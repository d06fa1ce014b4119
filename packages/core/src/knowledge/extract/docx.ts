import { type ExtractedText, ExtractionError } from "../ports.ts";
import { measureZip } from "./zip-guard.ts";

const MB = 1024 * 1024;
/** A DOCX may expand to 50× its size (XML compresses ~10×), at least 16 MB, at most 200 MB. */
export const docxExpansionCap = (bytes: number): number => Math.min(Math.max(50 * bytes, 16 * MB), 200 * MB);

/** The document's text (mammoth's raw text: paragraphs as lines), after the zip is proven small. */
export async function extractDocx(content: Uint8Array): Promise<ExtractedText> {
  const cap = docxExpansionCap(content.length);
  const entries = await measureZip(
    content,
    cap,
    () => new ExtractionError(`the DOCX expands to more than ${Math.round(cap / MB)} MB (a zip bomb?)`),
  );
  if (!entries.some((entry) => entry.name === "word/document.xml"))
    throw new ExtractionError("not a Word document: the file has no word/document.xml");
  try {
    const { default: mammoth } = await import("mammoth");
    const result = await mammoth.extractRawText({ buffer: Buffer.from(content) });
    return { text: result.value };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExtractionError(`could not read the DOCX: ${reason}`);
  }
}
