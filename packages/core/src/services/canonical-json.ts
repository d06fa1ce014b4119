import { createHash } from "node:crypto";

const canonicalize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      sorted[key] = canonicalize((value as Record<string, unknown>)[key]);
    }
    return sorted;
  }
  return value;
};

/** JSON with object keys sorted at every level: equal content, equal text. */
export const canonicalJson = (value: unknown): string => JSON.stringify(canonicalize(value));

/** SHA-256 hex of the canonical JSON (content hashes, idempotency request hashes). */
export const canonicalHash = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value), "utf8").digest("hex");
