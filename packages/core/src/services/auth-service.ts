import { forbidden, unauthorized } from "../errors.ts";
import type { Store } from "../ports.ts";
import { apiKeyHashesEqual, hashApiKey, isApiKeyFormat } from "../security/api-keys.ts";
import { bearerCredential } from "../security/bearer.ts";
import type { AuthService } from "../services.ts";

export function createAuthService(dependencies: { store: Store }): AuthService {
  const { store } = dependencies;
  const authenticateKey: AuthService["authenticateKey"] = async (key) => {
    // Unknown formats are refused without a lookup; every refusal below reads the same.
    if (!isApiKeyFormat(key)) throw unauthorized("invalid API key");
    const hash = hashApiKey(key);
    // The store never finds a revoked key (its port says so): one reads as unknown.
    const found = await store.tenants.findApiKeyByHash(hash);
    if (!found || !apiKeyHashesEqual(hash, found.key.hash)) throw unauthorized("invalid API key");
    return { ...found.tenant, apiKeyId: found.key.id, apiKeyPrefix: found.key.prefix };
  };
  return {
    async authenticate(authorizationHeader) {
      if (authorizationHeader === null || authorizationHeader.trim() === "")
        throw unauthorized("missing API key (Authorization: Bearer <API key>)");
      // Only `Bearer <key>`: a bare key or another scheme is refused (docs/SECURITY.md).
      const key = bearerCredential(authorizationHeader);
      if (key === null) throw unauthorized("malformed Authorization header (expected 'Bearer <API key>')");
      return authenticateKey(key);
    },
    authenticateKey,
    requireActiveSubscription(tenant) {
      if (!tenant.subscriptionActive) throw forbidden("no active subscription");
    },
  };
}
