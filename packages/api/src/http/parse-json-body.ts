import { invalid } from "@promptrun/core";
import { exceedsJsonDepth } from "./json-depth.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** A `\u` escape of a UTF-16 surrogate: the only way a lone surrogate gets past UTF-8 decoding. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when some key or string value holds a lone surrogate (not valid Unicode; breaks UTF-8 storage). */
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([key, inner]) => LONE_SURROGATE.test(key) || hasLoneSurrogate(inner));
  }
  return false;
}

/**
 * Decodes UTF-8 and parses JSON, refusing (400) invalid text, nesting deeper than `maxDepth`
 * and strings that are not valid Unicode.
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid("request body is not valid UTF-8");
  }
  if (text.trim() === "") throw invalid("request body must be a JSON object");
  // Checked before parsing: deep documents are cheap to refuse and costly downstream.
  if (exceedsJsonDepth(text, maxDepth)) {
    throw invalid(`request body nests deeper than ${maxDepth} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("request body is not valid JSON");
  }
  // Depth is capped above, so this walk is bounded.
  if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(value)) {
    throw invalid("request body contains a lone UTF-16 surrogate escape (not valid Unicode)");
  }
  return value;
}
