import { createHash, createHmac, hkdfSync } from "node:crypto";
import { canonicalJson } from "../services/canonical-json.ts";

export interface RequestFingerprint {
  /** HMAC-SHA256 (hex) of the canonical JSON under a key derived from the current secret. */
  of(value: unknown): string;
  /**
   * Whether a stored fingerprint is this value's: under the current secret, a previous one (so
   * a rotation does not turn replays into 409s), or the unkeyed SHA-256 that releases before the
   * keyed form stored (kept so idempotency keys in flight across the upgrade still replay; they
   * expire with the 24 h TTL).
   */
  matches(stored: string, value: unknown): boolean;
}

const keyFor = (secret: string): Buffer =>
  Buffer.from(hkdfSync("sha256", secret, "promptrun", "promptrun/idempotency-fingerprint/v1", 32));

/**
 * Fingerprints of idempotent requests. A request carries envVars values (API keys of the
 * tenant's providers): a plain hash in the database could be checked against guesses offline,
 * a keyed one cannot without the server secret.
 */
export function createRequestFingerprint(secret: string, previousSecrets: string[] = []): RequestFingerprint {
  const [current, ...previous] = [secret, ...previousSecrets].map(keyFor);
  const hmac = (key: Buffer, text: string) => createHmac("sha256", key).update(text, "utf8").digest("hex");
  return {
    of: (value) => hmac(current!, canonicalJson(value)),
    matches(stored, value) {
      const text = canonicalJson(value);
      if (stored === hmac(current!, text)) return true;
      if (previous.some((key) => stored === hmac(key, text))) return true;
      return stored === createHash("sha256").update(text, "utf8").digest("hex");
    },
  };
}
