import { describe, expect, test } from "bun:test";
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from "jose";
import { PromptrunError } from "../errors.ts";
import type { TenantRecord } from "../ports.ts";
import { createTokenBucketRateLimiter } from "../rate-limit/token-bucket.ts";
import { manualClock } from "../testing/clock.ts";
import { createTestConfig } from "../testing/test-config.ts";
import { createStreamTokenService } from "./stream-tokens.ts";

const THREAD = "0190f1f0-0000-7000-8000-0000000000aa";
const OTHER_THREAD = "0190f1f0-0000-7000-8000-0000000000bb";
const tenant: TenantRecord = { id: "tenant-1", name: "T", subscriptionActive: true, createdAt: new Date(0) };

const setup = (overrides: Parameters<typeof createTestConfig>[0] = {}) => {
  const clock = manualClock(new Date("2030-01-01T00:00:00.000Z"));
  const config = createTestConfig({ streamUrl: "https://stream.example.com/", ...overrides });
  return { clock, config, service: createStreamTokenService({ config, clock }) };
};

const rejection = async (promise: Promise<unknown>): Promise<PromptrunError> => {
  try {
    await promise;
  } catch (error) {
    if (PromptrunError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
};

describe("stream tokens", () => {
  test("issues an HS256 JWT with tenant, thread, scope, iat, exp and jti, and verifies it", async () => {
    const { service } = setup();
    const issued = await service.issue(tenant, THREAD.toUpperCase());
    expect(issued.url).toBe(`https://stream.example.com/stream/${THREAD}`);
    expect(issued.expiresAt).toBe("2030-01-01T00:05:00.000Z");
    expect(decodeProtectedHeader(issued.token).alg).toBe("HS256");
    const claims = decodeJwt(issued.token);
    expect(claims).toMatchObject({ sub: "tenant-1", thread: THREAD, scope: "thread:read" });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(typeof claims.jti).toBe("string");
    expect(await service.verify(issued.token, THREAD)).toEqual({
      tenantId: "tenant-1",
      threadId: THREAD,
      expiresAt: new Date("2030-01-01T00:05:00.000Z"),
    });
  });

  test("expires at exp, by the injected clock", async () => {
    const { service, clock } = setup();
    const { token } = await service.issue(tenant, THREAD);
    clock.advance(299_000);
    await service.verify(token, THREAD);
    clock.advance(1_000);
    const error = await rejection(service.verify(token, THREAD));
    expect(error.code).toBe("unauthorized");
    expect(error.message).toBe("invalid or expired stream token");
  });

  test("rejects a token signed with another secret", async () => {
    const { service } = setup();
    const other = setup({ secret: "another-secret-0123456789abcdef0123456789" }).service;
    const { token } = await other.issue(tenant, THREAD);
    expect((await rejection(service.verify(token, THREAD))).code).toBe("unauthorized");
  });

  test("rejects alg none and a token signed with the raw secret instead of the derived key", async () => {
    const { service, config } = setup();
    const claims = {
      thread: THREAD,
      scope: "thread:read",
      sub: "tenant-1",
      aud: "promptrun:stream",
      jti: "x",
    };
    const unsecured = new UnsecuredJWT(claims)
      .setIssuedAt(1_893_456_000)
      .setExpirationTime(1_893_456_300)
      .encode();
    expect((await rejection(service.verify(unsecured, THREAD))).code).toBe("unauthorized");
    const rawKeySigned = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt(1_893_456_000)
      .setExpirationTime(1_893_456_300)
      .sign(new TextEncoder().encode(config.secret));
    expect((await rejection(service.verify(rawKeySigned, THREAD))).code).toBe("unauthorized");
  });

  test("rejects a tampered payload and garbage", async () => {
    const { service } = setup();
    const { token } = await service.issue(tenant, THREAD);
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...claims, thread: OTHER_THREAD })).toString("base64url");
    expect((await rejection(service.verify(`${header}.${forged}.${signature}`, OTHER_THREAD))).code).toBe(
      "unauthorized",
    );
    expect((await rejection(service.verify("not-a-jwt", THREAD))).code).toBe("unauthorized");
  });

  test("a token of another thread is forbidden", async () => {
    const { service } = setup();
    const { token } = await service.issue(tenant, THREAD);
    const error = await rejection(service.verify(token, OTHER_THREAD));
    expect(error.code).toBe("forbidden");
  });

  test("issue: malformed thread → not_found, inactive subscription → forbidden, then the rate limit", async () => {
    const { config, clock } = setup();
    const rateLimits = createTokenBucketRateLimiter({ rateLimit: { perSecond: 1, burst: 1 }, clock });
    const service = createStreamTokenService({ config, clock, rateLimits });
    expect((await rejection(service.issue({ ...tenant, subscriptionActive: false }, "nope"))).code).toBe(
      "not_found",
    );
    const inactive = await rejection(service.issue({ ...tenant, subscriptionActive: false }, THREAD));
    expect(inactive.code).toBe("forbidden");
    expect(inactive.message).toBe("no active subscription");
    await service.issue(tenant, THREAD);
    const limited = await rejection(service.issue(tenant, THREAD));
    expect(limited.code).toBe("rate_limited");
    expect(limited.retryAfterSeconds).toBe(1);
  });
});
