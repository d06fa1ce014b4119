import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for secrets at rest (env vars, webhook secrets, run envVars).
 * Ciphertext format: `v1.<keyId>.<iv>.<tag>.<data>` (base64url), where keyId names the key
 * derived from one PROMPTRUN_SECRET, so rotation can decrypt with previous secrets.
 */
export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
  encryptJson(value: unknown): string;
  decryptJson<T>(ciphertext: string): T;
  /** True when the ciphertext is under an older key and should be re-encrypted. */
  isStale(ciphertext: string): boolean;
}

interface DerivedKey {
  id: string;
  key: Buffer;
}

const derive = (secret: string): DerivedKey => {
  const key = Buffer.from(hkdfSync("sha256", secret, "promptrun", "promptrun/secret-box/v1", 32));
  const id = createHash("sha256").update(key).digest("base64url").slice(0, 8);
  return { id, key };
};

export function createSecretBox(secret: string, previousSecrets: string[] = []): SecretBox {
  const current = derive(secret);
  const keys = new Map<string, Buffer>([[current.id, current.key]]);
  for (const previous of previousSecrets) {
    const derived = derive(previous);
    if (!keys.has(derived.id)) keys.set(derived.id, derived.key);
  }

  const encrypt = (plaintext: string): string => {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", current.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [
      "v1",
      current.id,
      iv.toString("base64url"),
      cipher.getAuthTag().toString("base64url"),
      data.toString("base64url"),
    ].join(".");
  };

  const decrypt = (ciphertext: string): string => {
    const [version, keyId, iv, tag, data] = ciphertext.split(".");
    if (version !== "v1" || !keyId || !iv || !tag || data === undefined)
      throw new Error("malformed ciphertext");
    const key = keys.get(keyId);
    if (!key)
      throw new Error(
        "ciphertext was encrypted under an unknown key (is PROMPTRUN_SECRET the one that wrote it?)",
      );
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  };

  return {
    encrypt,
    decrypt,
    encryptJson: (value) => encrypt(JSON.stringify(value)),
    decryptJson: <T>(ciphertext: string) => JSON.parse(decrypt(ciphertext)) as T,
    isStale: (ciphertext) => ciphertext.split(".")[1] !== current.id,
  };
}
