import { type ExtractedText, ExtractionError } from "../ports.ts";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** UTF-8 text, the byte order mark dropped; anything else (Latin-1, UTF-16) is refused, not garbled. */
export function decodeUtf8(content: Uint8Array): string {
  try {
    return decoder.decode(content);
  } catch {
    throw new ExtractionError("the file is not valid UTF-8 text: save it as UTF-8 and upload it again");
  }
}

export const extractPlain = (content: Uint8Array): ExtractedText => ({ text: decodeUtf8(content) });
