/**
 * Which of the accepted types an upload is (docs/KNOWLEDGE.md, "Types and detection"): the declared
 * type, else the filename's extension; then the first bytes must agree, so a file whose name lies
 * about its type is refused with 415 before anything parses it.
 */
import type { DocumentMediaType } from "@promptrun/contract";
import { PromptrunError } from "../../errors.ts";

export const DOCX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** Extension (lower case, with the dot) → media type. */
export const ACCEPTED_EXTENSIONS: Readonly<Record<string, DocumentMediaType>> = {
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
  ".pdf": "application/pdf",
  ".docx": DOCX_MEDIA_TYPE,
};

/** Declared types (lower case, no parameters) we take, with the aliases clients send. */
const DECLARED: Readonly<Record<string, DocumentMediaType>> = {
  "text/plain": "text/plain",
  "text/markdown": "text/markdown",
  "text/x-markdown": "text/markdown",
  "text/html": "text/html",
  "application/xhtml+xml": "text/html",
  "application/pdf": "application/pdf",
  [DOCX_MEDIA_TYPE]: DOCX_MEDIA_TYPE,
};

/** How many leading bytes detection looks at (pass at least this many as `head`). */
export const SNIFF_BYTES = 8192;

const ACCEPTED_LIST = `text/plain (.txt), text/markdown (.md, .markdown), text/html (.html, .htm), application/pdf (.pdf), ${DOCX_MEDIA_TYPE} (.docx)`;

const unsupported = (message: string) => new PromptrunError("unsupported_media_type", message);

export interface DetectMediaTypeInput {
  filename: string;
  /** The client's Content-Type for the file (multipart part header or JSON `mediaType`), if any. */
  declared?: string | null | undefined;
  /** The file's first bytes (at least SNIFF_BYTES when the file is that long). */
  head: Uint8Array;
  /** The type when neither a declared type nor the extension tells (a JSON text upload: text/plain). */
  fallback?: DocumentMediaType | undefined;
}

const extensionOf = (filename: string): string => {
  const dot = filename.lastIndexOf(".");
  return dot < 0 ? "" : filename.slice(dot).toLowerCase();
};

const startsWith = (head: Uint8Array, magic: number[]): boolean =>
  head.length >= magic.length && magic.every((byte, index) => head[index] === byte);

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]; // PK\3\4

function claimedType({ filename, declared, fallback }: DetectMediaTypeInput): DocumentMediaType {
  const bare = declared?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (bare && bare !== "application/octet-stream") {
    const type = DECLARED[bare];
    if (!type) throw unsupported(`unsupported media type '${bare}': accepted are ${ACCEPTED_LIST}`);
    return type;
  }
  const extension = extensionOf(filename);
  const type = ACCEPTED_EXTENSIONS[extension] ?? fallback;
  if (!type) {
    const what = extension ? `extension '${extension}'` : "no extension";
    throw unsupported(
      `cannot tell the type of '${filename}' (${what}, no content type given): accepted are ${ACCEPTED_LIST}`,
    );
  }
  return type;
}

/** What the bytes look like, for the message when they disagree with the claim. */
function looksBinary(head: Uint8Array): boolean {
  if (startsWith(head, PDF_MAGIC) || startsWith(head, ZIP_MAGIC)) return true;
  const end = Math.min(head.length, SNIFF_BYTES);
  for (let index = 0; index < end; index++) if (head[index] === 0) return true;
  return false;
}

function contentMatches(type: DocumentMediaType, head: Uint8Array): boolean {
  if (type === "application/pdf") return startsWith(head, PDF_MAGIC);
  if (type === DOCX_MEDIA_TYPE) return startsWith(head, ZIP_MAGIC);
  return !looksBinary(head);
}

const NAMES: Record<DocumentMediaType, string> = {
  "text/plain": "text",
  "text/markdown": "Markdown",
  "text/html": "HTML",
  "application/pdf": "a PDF",
  [DOCX_MEDIA_TYPE]: "a DOCX (zip) file",
};

/** The upload's media type; PromptrunError unsupported_media_type (415) when it is none we take or the bytes disagree. */
export function detectMediaType(input: DetectMediaTypeInput): { mediaType: DocumentMediaType } {
  const mediaType = claimedType(input);
  if (!contentMatches(mediaType, input.head)) {
    const extension = extensionOf(input.filename);
    const says =
      ACCEPTED_EXTENSIONS[extension] === mediaType
        ? ` (its name says ${extension})`
        : ` (declared ${mediaType})`;
    throw unsupported(
      `the file's content is not ${NAMES[mediaType]}${says}: upload the real file or fix its type`,
    );
  }
  return { mediaType };
}
