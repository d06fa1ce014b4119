import { invalid, PromptrunError } from "@promptrun/core";
import { isServerFramed } from "./server-framed.ts";

const defaultTooLargeMessage = (maxBytes: number) => `request body exceeds ${maxBytes} bytes`;

export interface ReadBodyOptions {
  /** The 413's message (an upload names its own limit and setting). */
  tooLargeMessage?: string;
}

/**
 * Reads the whole body, refusing more than `maxBytes`: a larger Content-Length is refused before
 * reading, and the bytes are counted while streaming (Content-Length may lie or be absent), so
 * reading stops at the first chunk past the limit instead of buffering a huge body.
 */
export async function readBodyBytes(
  request: Request,
  maxBytes: number,
  options: ReadBodyOptions = {},
): Promise<Uint8Array> {
  const tooLarge = (limit: number) =>
    new PromptrunError("payload_too_large", options.tooLargeMessage ?? defaultTooLargeMessage(limit));
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes) {
    throw tooLarge(maxBytes);
  }
  if (request.body === null) return new Uint8Array(0);
  // A declared length within the limit on a request from the server: the framing reads exactly
  // that many bytes, so the body is taken in one call (several times cheaper than a stream reader
  // on the create-run hot path).
  if (declared !== null && isServerFramed(request)) {
    let bytes: Uint8Array;
    try {
      bytes = await request.bytes();
    } catch {
      throw invalid("request body could not be read");
    }
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // An aborted upload or a body already consumed: the client's problem, not a 500.
      throw invalid("request body could not be read");
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
