import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Every key starts with this; the rest is 32 random bytes, base64url (43 characters). */
export const API_KEY_PREFIX = "pr_live_";
/** Characters of a key kept for display and revocation by prefix (8 of them random). */
export const API_KEY_DISPLAY_LENGTH = 16;
const API_KEY_PATTERN = /^pr_live_[A-Za-z0-9_-]{43}$/;

export interface GeneratedApiKey {
  /** The full key: shown once, never stored. */
  key: string;
  prefix: string;
  hash: string;
}

export const isApiKeyFormat = (value: string): boolean => API_KEY_PATTERN.test(value);

/** SHA-256 hex: the key has 256 bits of entropy, so a fast unsalted hash is enough. */
export const hashApiKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex");

export const apiKeyDisplayPrefix = (key: string): string => key.slice(0, API_KEY_DISPLAY_LENGTH);

export function generateApiKey(): GeneratedApiKey {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { key, prefix: apiKeyDisplayPrefix(key), hash: hashApiKey(key) };
}

/**
 * Constant-time comparison of two SHA-256 hex hashes. Both are fixed-length, so
 * timingSafeEqual (which throws on a length mismatch) is safe; anything else is unequal.
 */
export function apiKeyHashesEqual(presented: string, stored: string): boolean {
  const a = Buffer.from(presented, "utf8");
  const b = Buffer.from(stored, "utf8");
  return a.length === 64 && b.length === 64 && timingSafeEqual(a, b);
}
