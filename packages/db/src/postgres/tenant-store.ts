import type { ApiKeyRecord, TenantRecord, TenantStore } from "@promptrun/core";
import { and, asc, eq, isNull, lte, or, sql } from "drizzle-orm";
import { apiKeys, tenants } from "../schema/postgres.ts";
import {
  keysToRevoke,
  LAST_USED_GRANULARITY_MS,
  MAX_CACHED_KEYS,
  revokeTarget,
} from "../shared/api-key-rules.ts";
import type { PostgresContext } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";
import { createReadCache } from "./read-cache.ts";

type FoundKey = { key: ApiKeyRecord; tenant: TenantRecord };

/** Copies, so a caller that changes what it got cannot change the cache. */
const copyFoundKey = (found: FoundKey): FoundKey => ({ key: { ...found.key }, tenant: { ...found.tenant } });

/**
 * Authentication runs on every request: active keys (with their tenant) are remembered, so a
 * request costs no round trip for them. Every write to keys or tenants announces itself
 * (ChangeFeed): this process forgets at once, other instances when the NOTIFY arrives, and at
 * the latest after the cache's TTL.
 */
export const createTenantStore = ({ db, clock, changes, cacheTtlMs }: PostgresContext): TenantStore => {
  const keysByHash = createReadCache<FoundKey>({ maxEntries: MAX_CACHED_KEYS, ttlMs: cacheTtlMs });
  changes.register(() => keysByHash.clear());

  const lookUp = async (hash: string): Promise<FoundKey | null> => {
    const [row] = await db
      .select({ key: apiKeys, tenant: tenants })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)));
    return row ?? null;
  };

  return {
    async create(tenant: TenantRecord) {
      await withConstraintErrors("tenant", () => db.insert(tenants).values(tenant));
      await changes.announce();
    },

    async get(id) {
      const [row] = await db.select().from(tenants).where(eq(tenants.id, id));
      return row ?? null;
    },

    async accessOf(tenantId, apiKeyId) {
      const keyLive =
        apiKeyId === undefined
          ? sql<boolean>`true`
          : // Written out: drizzle leaves columns unqualified here, and "id" would be the key's own.
            sql<boolean | null>`(SELECT k.revoked_at IS NULL FROM api_keys k
              WHERE k.id = ${apiKeyId} AND k.tenant_id = tenants.id)`;
      const [row] = await db
        .select({ subscriptionActive: tenants.subscriptionActive, keyLive })
        .from(tenants)
        .where(eq(tenants.id, tenantId));
      return row ? { subscriptionActive: row.subscriptionActive, keyLive: row.keyLive === true } : null;
    },

    async list() {
      return db.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id));
    },

    async setSubscription(id, active) {
      const updated = await db
        .update(tenants)
        .set({ subscriptionActive: active })
        .where(eq(tenants.id, id))
        .returning({ id: tenants.id });
      await changes.announce();
      return updated.length > 0;
    },

    async createApiKey(key: ApiKeyRecord) {
      await withConstraintErrors("API key", () => db.insert(apiKeys).values(key));
      await changes.announce();
    },

    async findApiKeyByHash(hash) {
      const found = await keysByHash.get(hash, () => lookUp(hash));
      if (!found) return null;
      const now = clock.now();
      const staleBefore = new Date(now.getTime() - LAST_USED_GRANULARITY_MS);
      if (found.key.lastUsedAt === null || found.key.lastUsedAt <= staleBefore) {
        try {
          // Conditional, so several instances authenticating at once write it once.
          await db
            .update(apiKeys)
            .set({ lastUsedAt: now })
            .where(
              and(
                eq(apiKeys.id, found.key.id),
                or(isNull(apiKeys.lastUsedAt), lte(apiKeys.lastUsedAt, staleBefore)),
              ),
            );
          // The cached copy too: the next lookups within the granularity write nothing.
          found.key.lastUsedAt = now;
        } catch {
          // Bookkeeping only: a busy database must not fail authentication.
        }
      }
      return copyFoundKey(found);
    },

    async listApiKeys(tenantId) {
      return db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.tenantId, tenantId))
        .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
    },

    async revokeApiKeys(match, at) {
      const active = isNull(apiKeys.revokedAt);
      const target = revokeTarget(match);
      const condition =
        "id" in target
          ? and(eq(apiKeys.id, target.id), active)
          : // The given text may be the displayed prefix or any leading part of it.
            and(sql`left(${apiKeys.prefix}, ${target.prefix.length}) = ${target.prefix}`, active);
      const revoked = await db.transaction(async (tx) => {
        // Locked, so a concurrent revoke of the same keys waits and then finds them revoked.
        const targets = keysToRevoke(
          target,
          await tx.select().from(apiKeys).where(condition).orderBy(asc(apiKeys.id)).for("update"),
        );
        for (const key of targets) {
          await tx.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, key.id));
          key.revokedAt = at;
        }
        return targets;
      });
      if (revoked.length > 0) await changes.announce();
      return revoked;
    },
  };
};
