import { expect, test } from "bun:test";
import { createSecretBox } from "./secret-box.ts";

test("round-trips, hides the plaintext, detects tampering", () => {
  const box = createSecretBox("s".repeat(32));
  const sealed = box.encrypt("hunter2-secret-value");
  expect(sealed).not.toContain("hunter2");
  expect(box.decrypt(sealed)).toBe("hunter2-secret-value");
  expect(box.encrypt("x")).not.toBe(box.encrypt("x"));
  const parts = sealed.split(".");
  parts[4] = `${parts[4]!.slice(0, -2)}AA`;
  expect(() => box.decrypt(parts.join("."))).toThrow();
});

test("rotation: a new key still decrypts values sealed under a previous secret", () => {
  const old = createSecretBox("old-secret-old-secret-old-secret!");
  const sealed = old.encryptJson({ A: "1" });
  const rotated = createSecretBox("new-secret-new-secret-new-secret!", ["old-secret-old-secret-old-secret!"]);
  expect(rotated.isStale(sealed)).toBe(true);
  expect(rotated.decryptJson<{ A: string }>(sealed)).toEqual({ A: "1" });
  expect(rotated.isStale(rotated.encrypt("x"))).toBe(false);
  expect(() => createSecretBox("unrelated-secret-unrelated-secret").decrypt(sealed)).toThrow("unknown key");
});
