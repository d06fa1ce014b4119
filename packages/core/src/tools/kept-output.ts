import { TOOL_RESULT_KEPT_BYTES } from "@promptrun/contract";

const TRUNCATED = "…[truncated]";

/** `text` within `maxBytes` UTF-8 bytes, the mark included, cut on a character boundary. */
function cutText(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.byteLength <= maxBytes) return text;
  let end = maxBytes - Buffer.byteLength(TRUNCATED);
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8") + TRUNCATED;
}

/**
 * A tool output as kept in the run and sent to the model: a string or JSON value up to
 * TOOL_RESULT_KEPT_BYTES (64 KB) of its text (a JSON value's JSON); a longer one becomes its
 * text cut to fit, ending in `…[truncated]`.
 */
export function keptToolOutput(output: unknown): unknown {
  const maxBytes = TOOL_RESULT_KEPT_BYTES;
  if (typeof output === "string") return cutText(output, maxBytes);
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch {
    // Nested too deep, or not JSON at all (a cycle): nothing faithful can be kept.
    return "[the tool output could not be written as JSON]";
  }
  if (json === undefined) return null;
  return Buffer.byteLength(json) <= maxBytes ? output : cutText(json, maxBytes);
}
