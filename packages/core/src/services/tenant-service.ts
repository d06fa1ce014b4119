import type { ApiKeySummary, Tenant } from "@promptrun/contract";
import { DEFAULT_TENANT_QUOTAS, type TenantQuotas } from "../config.ts";
import { DEFAULT_ENVIRONMENT } from "../environments/default-environment.ts";
import { invalid, notFound } from "../errors.ts";
import type { ApiKeyRecord, Clock, Store, TenantRecord } from "../ports.ts";
import { API_KEY_PREFIX, generateApiKey, hashApiKey, isApiKeyFormat } from "../security/api-keys.ts";
import type { TenantService } from "../services.ts";
import { createQuotaGuard } from "./tenant-quota.ts";
import { uuidv7 } from "./uuidv7.ts";

export interface TenantServiceDependencies {
  store: Store;
  clock: Clock;
  newId?: () => string;
  quotas?: Pick<TenantQuotas, "apiKeys">;
}

const toTenant = (record: TenantRecord): Tenant => ({
  id: record.id,
  name: record.name,
  subscriptionActive: record.subscriptionActive,
  createdAt: record.createdAt.toISOString(),
});

const toApiKeySummary = (record: ApiKeyRecord): ApiKeySummary => ({
  id: record.id,
  prefix: record.prefix,
  createdAt: record.createdAt.toISOString(),
  revokedAt: record.revokedAt?.toISOString() ?? null,
  lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
});

/** A prefix must reach into the random part of a key, or it would name every key. */
const MIN_REVOKE_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

export function createTenantService(dependencies: TenantServiceDependencies): TenantService {
  const { store, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7(clock.now().getTime()));
  const keyQuota = createQuotaGuard("apiKeys", (dependencies.quotas ?? DEFAULT_TENANT_QUOTAS).apiKeys);

  const requireTenant = async (tenantId: string): Promise<TenantRecord> => {
    const tenant = await store.tenants.get(tenantId);
    if (!tenant) throw notFound(`tenant '${tenantId}' not found`);
    return tenant;
  };

  const issueKey = async (tenantId: string) => {
    const generated = generateApiKey();
    const record: ApiKeyRecord = {
      id: newId(),
      tenantId,
      prefix: generated.prefix,
      hash: generated.hash,
      createdAt: clock.now(),
      revokedAt: null,
      lastUsedAt: null,
    };
    await store.tenants.createApiKey(record);
    // The only time the full key exists outside the caller's hands.
    return { apiKey: generated.key, key: toApiKeySummary(record) };
  };

  return {
    async create(name, options) {
      const trimmed = name.trim();
      if (trimmed.length === 0 || trimmed.length > 200) throw invalid("name: must be 1 to 200 characters");
      const at = clock.now();
      const tenant: TenantRecord = {
        id: newId(),
        name: trimmed,
        subscriptionActive: options?.active ?? true,
        createdAt: at,
      };
      await store.tenants.create(tenant);
      await store.environments.ensure(tenant.id, DEFAULT_ENVIRONMENT, newId(), at);
      const { apiKey } = await issueKey(tenant.id);
      return { tenant: toTenant(tenant), apiKey };
    },

    async get(tenantId) {
      return toTenant(await requireTenant(tenantId));
    },

    async list() {
      return (await store.tenants.list()).map(toTenant);
    },

    async setSubscription(tenantId, active) {
      if (!(await store.tenants.setSubscription(tenantId, active)))
        throw notFound(`tenant '${tenantId}' not found`);
      return toTenant(await requireTenant(tenantId));
    },

    async createApiKey(tenantId) {
      await requireTenant(tenantId);
      return keyQuota.exclusive(tenantId, async () => {
        const keys = await store.tenants.listApiKeys(tenantId);
        keyQuota.assertRoom(keys.filter((key) => key.revokedAt === null).length);
        return issueKey(tenantId);
      });
    },

    async listApiKeys(tenantId) {
      await requireTenant(tenantId);
      return (await store.tenants.listApiKeys(tenantId)).map(toApiKeySummary);
    },

    async revokeOwnApiKey(tenantId, keyId) {
      // keyLive: the key exists, is this tenant's and is not revoked (one lookup, no listing).
      if (!(await store.tenants.accessOf(tenantId, keyId))?.keyLive)
        throw notFound(`no active API key '${keyId}'`);
      const revoked = await store.tenants.revokeApiKeys({ id: keyId }, clock.now());
      return { revoked: revoked.length };
    },

    async revokeApiKey(keyOrPrefix) {
      const value = keyOrPrefix.trim();
      const at = clock.now();
      if (isApiKeyFormat(value)) {
        const found = await store.tenants.findApiKeyByHash(hashApiKey(value));
        // Never echo a full key in a message.
        if (!found || found.key.revokedAt !== null) throw notFound("no active API key matches the given key");
        const revoked = await store.tenants.revokeApiKeys({ id: found.key.id }, at);
        return { revoked: revoked.length };
      }
      if (!value.startsWith(API_KEY_PREFIX) || value.length < MIN_REVOKE_PREFIX_LENGTH)
        throw invalid(
          `expected an API key or a prefix of at least ${MIN_REVOKE_PREFIX_LENGTH} characters starting with '${API_KEY_PREFIX}'`,
        );
      const revoked = await store.tenants.revokeApiKeys({ prefix: value }, at);
      if (revoked.length === 0)
        throw notFound(
          `no single active API key has the prefix '${value}' (none, or several: give more characters)`,
        );
      return { revoked: revoked.length };
    },
  };
}
