import { invalid } from "@promptrun/core";

/** The boundary of a `multipart/form-data` Content-Type; null when absent. */
export function multipartBoundary(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

/** Bytes of a part's header block looked at (headers are short; a body is not scanned as headers). */
const PART_HEADER_LIMIT = 8 * 1024;

/**
 * The Content-Type a part named `field` declares. Bun's FormData reports a file's type from its
 * filename's extension and drops the declared one, so the part headers are read here.
 */
export function declaredPartType(body: Uint8Array, boundary: string, field: string): string | undefined {
  const buffer = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const delimiter = Buffer.from(`--${boundary}`, "latin1");
  for (let at = buffer.indexOf(delimiter); at !== -1; at = buffer.indexOf(delimiter, at + delimiter.length)) {
    const start = at + delimiter.length;
    const window = buffer.subarray(start, start + PART_HEADER_LIMIT).toString("latin1");
    const end = window.indexOf("\r\n\r\n");
    if (end === -1) continue;
    const headers = window.slice(0, end).split("\r\n");
    const disposition = headers.find((line) => /^content-disposition:/i.test(line)) ?? "";
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name !== field) continue;
    const type = headers.find((line) => /^content-type:/i.test(line));
    // The media type without parameters: clients add `;charset=utf-8` to text parts on their own.
    const essence = type
      ?.slice(type.indexOf(":") + 1)
      .split(";", 1)[0]
      ?.trim()
      .toLowerCase();
    return essence || undefined;
  }
  return undefined;
}

type ParsedForm = Awaited<ReturnType<Response["formData"]>>;

/** Parses a multipart body already read (and size-checked); malformed → 400. */
export async function parseFormData(body: Uint8Array, contentType: string): Promise<ParsedForm> {
  if (multipartBoundary(contentType) === null) {
    throw invalid("multipart/form-data needs a boundary parameter in its Content-Type");
  }
  try {
    // Read bodies are plain ArrayBuffer-backed (the cast satisfies the DOM typing of BodyInit).
    return await new Response(body as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": contentType },
    }).formData();
  } catch {
    throw invalid("malformed multipart/form-data body: send the fields file, metadata (JSON) and externalId");
  }
}
