import { invalid } from "../../errors.ts";
import type { ApiKeyRecord, Clock, TenantRecord, TenantStore } from "../../ports.ts";
import { copy } from "./paging.ts";
import { duplicate, requireReference } from "./references.ts";

/** Like the SQL stores: a key's last use is written at most once a minute. */
const LAST_USED_GRANULARITY_MS = 60_000;

export interface MemoryTenantStore extends TenantStore {
  has(id: string): boolean;
  /** A tenant and one of its keys as stored (revoked or not), for the console sessions' join. */
  keyWithTenant(keyId: string): { key: ApiKeyRecord; tenant: TenantRecord } | null;
}

export function createMemoryTenantStore(clock: Clock): MemoryTenantStore {
  const tenants = new Map<string, TenantRecord>();
  const keys = new Map<string, ApiKeyRecord>();

  return {
    has: (id) => tenants.has(id),
    keyWithTenant(keyId) {
      const key = keys.get(keyId);
      const tenant = key ? tenants.get(key.tenantId) : undefined;
      return key && tenant ? { key: copy(key), tenant: copy(tenant) } : null;
    },
    async create(tenant) {
      if (tenants.has(tenant.id)) throw duplicate(`tenant ${tenant.id}`);
      tenants.set(tenant.id, copy(tenant));
    },
    async get(id) {
      const tenant = tenants.get(id);
      return tenant ? copy(tenant) : null;
    },
    async list() {
      return [...tenants.values()]
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
        .map(copy);
    },
    async setSubscription(id, active) {
      const tenant = tenants.get(id);
      if (!tenant) return false;
      tenant.subscriptionActive = active;
      return true;
    },
    async createApiKey(key) {
      requireReference(tenants.has(key.tenantId), `API key ${key.id}`);
      if (keys.has(key.id) || [...keys.values()].some((existing) => existing.hash === key.hash))
        throw duplicate(`API key ${key.id}`);
      keys.set(key.id, copy(key));
    },
    async accessOf(tenantId, apiKeyId) {
      const tenant = tenants.get(tenantId);
      if (!tenant) return null;
      const key = apiKeyId === undefined ? undefined : keys.get(apiKeyId);
      const keyLive = apiKeyId === undefined || (key?.tenantId === tenantId && key.revokedAt === null);
      return { subscriptionActive: tenant.subscriptionActive, keyLive };
    },
    async findApiKeyByHash(hash) {
      const key = [...keys.values()].find(
        (candidate) => candidate.hash === hash && candidate.revokedAt === null,
      );
      const tenant = key ? tenants.get(key.tenantId) : undefined;
      if (!key || !tenant) return null;
      const now = clock.now();
      if (key.lastUsedAt === null || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_GRANULARITY_MS)
        key.lastUsedAt = now;
      return { key: copy(key), tenant: copy(tenant) };
    },
    async listApiKeys(tenantId) {
      return [...keys.values()]
        .filter((key) => key.tenantId === tenantId)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
        .map(copy);
    },
    async revokeApiKeys(match, at) {
      const active = [...keys.values()].filter((key) => key.revokedAt === null);
      const { id, prefix } = match;
      if (id === undefined && (prefix === undefined || prefix.length === 0))
        throw invalid("revokeApiKeys needs an id or a prefix");
      const matches =
        id !== undefined
          ? active.filter((key) => key.id === id)
          : prefix !== undefined && prefix.length > 0
            ? active.filter((key) => key.prefix.startsWith(prefix))
            : [];
      // A prefix naming several keys revokes nothing: the caller must be more specific.
      if (matches.length !== 1) return [];
      for (const key of matches) key.revokedAt = at;
      return matches.map(copy);
    },
  };
}
