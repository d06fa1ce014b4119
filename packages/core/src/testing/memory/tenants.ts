import type { ApiKeyRecord, TenantRecord, TenantStore } from "../../ports.ts";
import { copy } from "./paging.ts";

export function createMemoryTenantStore(): TenantStore {
  const tenants = new Map<string, TenantRecord>();
  const keys = new Map<string, ApiKeyRecord>();

  return {
    async create(tenant) {
      if (tenants.has(tenant.id)) throw new Error(`tenant ${tenant.id} already exists`);
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
      if (!tenants.has(key.tenantId)) throw new Error(`unknown tenant ${key.tenantId}`);
      if ([...keys.values()].some((existing) => existing.hash === key.hash))
        throw new Error("duplicate API key hash");
      keys.set(key.id, copy(key));
    },
    async findApiKeyByHash(hash) {
      const key = [...keys.values()].find((candidate) => candidate.hash === hash);
      const tenant = key ? tenants.get(key.tenantId) : undefined;
      return key && tenant ? { key: copy(key), tenant: copy(tenant) } : null;
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
