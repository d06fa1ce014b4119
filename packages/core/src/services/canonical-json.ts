import { createHash } from "node:crypto";

const canonicalize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    // fromEntries defines own properties: a `__proto__` key stays a key (an assignment would set
    // the prototype and drop it from the text, so two different requests would hash alike).
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonicalize((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
};

/** JSON with object keys sorted at every level: equal content, equal text. */
export const canonicalJson = (value: unknown): string => JSON.stringify(canonicalize(value));

/** SHA-256 hex of the canonical JSON (content hashes, idempotency request hashes). */
export const canonicalHash = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value), "utf8").digest("hex");
