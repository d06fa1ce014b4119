import { describe, expect, test } from "bun:test";
import {
  API_KEY_DISPLAY_LENGTH,
  apiKeyHashesEqual,
  generateApiKey,
  hashApiKey,
  isApiKeyFormat,
} from "./api-keys.ts";

describe("api keys", () => {
  test("pr_live_ + 32 random bytes, a display prefix and a SHA-256 hex hash", () => {
    const generated = generateApiKey();
    expect(generated.key).toMatch(/^pr_live_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(generated.key.slice(8), "base64url")).toHaveLength(32);
    expect(isApiKeyFormat(generated.key)).toBe(true);
    expect(generated.prefix).toBe(generated.key.slice(0, API_KEY_DISPLAY_LENGTH));
    expect(generated.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(generated.hash).toBe(hashApiKey(generated.key));
    expect(generateApiKey().key).not.toBe(generated.key);
  });

  test("hash comparison: equal, different, and wrong length without throwing", () => {
    const hash = hashApiKey("a");
    expect(apiKeyHashesEqual(hash, hashApiKey("a"))).toBe(true);
    expect(apiKeyHashesEqual(hash, hashApiKey("b"))).toBe(false);
    expect(apiKeyHashesEqual("short", hash)).toBe(false);
  });

  test("rejects strings that are not keys", () => {
    expect(isApiKeyFormat("pr_live_short")).toBe(false);
    expect(isApiKeyFormat(`sk_live_${"a".repeat(43)}`)).toBe(false);
  });
});
