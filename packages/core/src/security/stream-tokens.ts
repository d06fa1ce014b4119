import { hkdfSync, randomUUID } from "node:crypto";
import { isUuid } from "@promptrun/contract";
import { jwtVerify, SignJWT } from "jose";
import type { PromptrunConfig } from "../config.ts";
import { forbidden, notFound, StreamAccessError, unauthorized } from "../errors.ts";
import type { Clock, TenantStore } from "../ports.ts";
import type { RateLimitService, StreamTokenService } from "../services.ts";

const SCOPE = "thread:read";
const AUDIENCE = "promptrun:stream";
const INVALID = "invalid or expired stream token";

export interface StreamTokenServiceDependencies {
  config: Pick<PromptrunConfig, "secret" | "streamUrl" | "streamTokenTtlSeconds">;
  clock: Clock;
  /** Stream tokens are rate limited per tenant like run creation (docs/PRODUCT-RULES.md "Limits"). */
  rateLimits?: RateLimitService;
  /** With it, verify() also checks that the tenant is active and the minting key not revoked. */
  tenants?: Pick<TenantStore, "accessOf">;
}

/** Its own HKDF label, so the signing key is unrelated to the secret box's encryption key. */
const deriveSigningKey = (secret: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(hkdfSync("sha256", secret, "promptrun", "promptrun/stream-token/v1", 32));

export const streamUrlFor = (streamUrl: string, threadId: string): string =>
  `${streamUrl.replace(/\/+$/, "")}/stream/${threadId}`;

/**
 * HS256 JWTs granting read access to one thread of one tenant.
 *
 * The subscription check lives here, in issue(), and only here: every transport (REST, tRPC,
 * CLI) mints through this method, so none can forget it. Order inside issue(): malformed thread
 * (not_found) → inactive subscription (forbidden) → rate limit (rate_limited), matching
 * the precedence of docs/PRODUCT-RULES.md; authentication (401) is the caller's, before it calls.
 */
export function createStreamTokenService(dependencies: StreamTokenServiceDependencies): StreamTokenService {
  const { config, clock, rateLimits, tenants } = dependencies;

  /** A token is only as good as what minted it: checked at every connect and each re-verification. */
  const requireAccess = async (tenantId: string, apiKeyId: string | undefined): Promise<void> => {
    if (!tenants) return;
    // Tokens minted before the key was named carry none: they keep working until they expire.
    const access = await tenants.accessOf(tenantId, apiKeyId);
    if (!access) throw unauthorized(INVALID);
    if (!access.subscriptionActive) throw new StreamAccessError("tenant_inactive");
    if (!access.keyLive) throw new StreamAccessError("key_revoked");
  };
  const keyBytes = deriveSigningKey(config.secret);
  // Imported once: given raw bytes, jose imports a WebCrypto key on every sign and verify.
  let importedKey: Promise<CryptoKey> | null = null;
  const signingKey = (): Promise<CryptoKey> =>
    (importedKey ??= crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]));

  return {
    async issue(tenant, threadId) {
      if (!isUuid(threadId)) throw notFound(`malformed thread id '${threadId}'`);
      if (!tenant.subscriptionActive) throw forbidden("no active subscription");
      await rateLimits?.take(tenant.id, "stream-token");
      const thread = threadId.toLowerCase();
      const issuedAt = Math.floor(clock.now().getTime() / 1000);
      const expiresAt = issuedAt + config.streamTokenTtlSeconds;
      const token = await new SignJWT({
        thread,
        scope: SCOPE,
        ...(tenant.apiKeyId === undefined ? {} : { key: tenant.apiKeyId }),
      })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject(tenant.id)
        .setAudience(AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(expiresAt)
        .setJti(randomUUID())
        .sign(await signingKey());
      return {
        token,
        expiresAt: new Date(expiresAt * 1000).toISOString(),
        url: streamUrlFor(config.streamUrl, thread),
      };
    },

    async verify(token, threadId) {
      let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
      try {
        ({ payload } = await jwtVerify(token, await signingKey(), {
          algorithms: ["HS256"],
          audience: AUDIENCE,
          currentDate: clock.now(),
          requiredClaims: ["exp", "sub", "jti"],
        }));
      } catch {
        // Bad signature, other algorithm, expiry, garbage: all read the same to the client.
        throw unauthorized(INVALID);
      }
      const { sub, thread, scope, exp, key } = payload;
      if (
        typeof sub !== "string" ||
        typeof thread !== "string" ||
        scope !== SCOPE ||
        typeof exp !== "number" ||
        (key !== undefined && typeof key !== "string")
      )
        throw unauthorized(INVALID);
      if (thread !== threadId.toLowerCase()) throw forbidden("stream token is for another thread");
      await requireAccess(sub, key);
      return {
        tenantId: sub,
        threadId: thread,
        expiresAt: new Date(exp * 1000),
        ...(key === undefined ? {} : { apiKeyId: key }),
      };
    },
  };
}
