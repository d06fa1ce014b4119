import { describe, expect, test } from "bun:test";
import { createRequestFingerprint } from "./request-fingerprint.ts";

const OLD = "o".repeat(32);
const NEW = "n".repeat(32);
const request = { slug: "greet", version: "latest", request: { envVars: { TOKEN: "secret-value" } } };

describe("createRequestFingerprint", () => {
  test("keyed: another secret gives another fingerprint; key order does not matter", () => {
    const fingerprint = createRequestFingerprint(NEW);
    expect(fingerprint.of(request)).not.toBe(createRequestFingerprint(OLD).of(request));
    expect(fingerprint.of({ request: request.request, version: "latest", slug: "greet" })).toBe(
      fingerprint.of(request),
    );
  });

  test("after a rotation, fingerprints stored under a previous secret still match", () => {
    const stored = createRequestFingerprint(OLD).of(request);
    expect(createRequestFingerprint(NEW, [OLD]).matches(stored, request)).toBe(true);
    expect(createRequestFingerprint(NEW).matches(stored, request)).toBe(false);
    expect(createRequestFingerprint(NEW, [OLD]).matches(stored, { ...request, version: "1" })).toBe(false);
  });
});
