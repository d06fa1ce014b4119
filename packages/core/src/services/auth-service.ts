import { forbidden, unauthorized } from "../errors.ts";
import type { Store } from "../ports.ts";
import { apiKeyHashesEqual, hashApiKey, isApiKeyFormat } from "../security/api-keys.ts";
import type { AuthService } from "../services.ts";

/** `Bearer <key>` (scheme case-insensitive) or a bare key; null when the header is malformed. */
const keyFromHeader = (header: string): string | null => {
  const trimmed = header.trim();
  const match = /^bearer\s+(\S+)$/i.exec(trimmed);
  if (match) return match[1]!;
  return isApiKeyFormat(trimmed) ? trimmed : null;
};

export function createAuthService(dependencies: { store: Store }): AuthService {
  const { store } = dependencies;
  return {
    async authenticate(authorizationHeader) {
      if (authorizationHeader === null || authorizationHeader.trim() === "")
        throw unauthorized("missing API key (Authorization: Bearer <API key>)");
      const key = keyFromHeader(authorizationHeader);
      if (key === null) throw unauthorized("malformed Authorization header (expected 'Bearer <API key>')");
      // Unknown formats are refused without a lookup; every refusal below reads the same.
      if (!isApiKeyFormat(key)) throw unauthorized("invalid API key");
      const hash = hashApiKey(key);
      const found = await store.tenants.findApiKeyByHash(hash);
      if (!found || !apiKeyHashesEqual(hash, found.key.hash)) throw unauthorized("invalid API key");
      if (found.key.revokedAt !== null) throw unauthorized("API key has been revoked");
      return { ...found.tenant, apiKeyId: found.key.id };
    },
    requireActiveSubscription(tenant) {
      if (!tenant.subscriptionActive) throw forbidden("no active subscription");
    },
  };
}
