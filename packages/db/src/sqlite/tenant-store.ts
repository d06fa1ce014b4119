import type { ApiKeyRecord, TenantRecord, TenantStore } from "@promptrun/core";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { apiKeys, tenants } from "../schema/sqlite.ts";
import { keysToRevoke, lastUseIsStale, MAX_CACHED_KEYS, revokeTarget } from "../shared/api-key-rules.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

type FoundKey = { key: ApiKeyRecord; tenant: TenantRecord };

interface KeyRow {
  id: string;
  tenant_id: string;
  prefix: string;
  hash: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  tenant_name: string;
  subscription_active: number;
  tenant_created_at: number;
}

const toFoundKey = (row: KeyRow): FoundKey => ({
  key: {
    id: row.id,
    tenantId: row.tenant_id,
    prefix: row.prefix,
    hash: row.hash,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
  },
  tenant: {
    id: row.tenant_id,
    name: row.tenant_name,
    subscriptionActive: row.subscription_active === 1,
    createdAt: new Date(row.tenant_created_at),
  },
});

/** Copies, so a caller that changes what it got cannot change the cache. */
const copyFoundKey = (found: FoundKey): FoundKey => ({ key: { ...found.key }, tenant: { ...found.tenant } });

/**
 * Authentication runs on every request: its lookup is one prepared statement, and active keys
 * are remembered. The memory is exact, not a TTL: this store's own writes clear it, and
 * `PRAGMA data_version` (which changes when any OTHER connection commits, e.g. the CLI revoking a
 * key or switching a subscription) clears it before the next lookup.
 */
export const createTenantStore = ({ db, raw, clock, dataVersion }: SqliteContext): TenantStore => {
  const selectKeyByHash = raw.prepare<KeyRow, { hash: string }>(
    `SELECT k.id, k.tenant_id, k.prefix, k.hash, k.created_at, k.revoked_at, k.last_used_at,
            t.name AS tenant_name, t.subscription_active, t.created_at AS tenant_created_at
       FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
      WHERE k.hash = $hash AND k.revoked_at IS NULL`,
  );
  const touchKey = raw.prepare<never, { id: string; at: number }>(
    "UPDATE api_keys SET last_used_at = $at WHERE id = $id",
  );
  // A stream connect's access check: one cached statement, not a listing of the tenant's keys.
  const selectAccess = raw.prepare<
    { subscription_active: number; key_live: number | null },
    { tenant: string; key: string | null }
  >(
    `SELECT t.subscription_active,
            (SELECT k.revoked_at IS NULL FROM api_keys k WHERE k.id = $key AND k.tenant_id = t.id) AS key_live
       FROM tenants t WHERE t.id = $tenant`,
  );
  const keysByHash = new Map<string, FoundKey>();
  let seenDataVersion = -1;

  /** Forgets every remembered key when another connection has committed since the last look. */
  const dropIfChangedElsewhere = () => {
    const current = dataVersion();
    if (current !== seenDataVersion) {
      seenDataVersion = current;
      keysByHash.clear();
    }
  };
  const remember = (hash: string, found: FoundKey) => {
    if (keysByHash.size >= MAX_CACHED_KEYS) {
      const oldest = keysByHash.keys().next().value;
      if (oldest !== undefined) keysByHash.delete(oldest);
    }
    keysByHash.set(hash, found);
  };
  /** After a write here: what a remembered key says about its tenant or itself may be stale. */
  const forgetKeys = () => keysByHash.clear();

  return {
    async create(tenant: TenantRecord) {
      withConstraintErrors("tenant", () => db.insert(tenants).values(tenant).run());
    },

    async get(id) {
      return db.select().from(tenants).where(eq(tenants.id, id)).get() ?? null;
    },

    async list() {
      return db.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)).all();
    },

    async setSubscription(id, active) {
      forgetKeys();
      const updated = db
        .update(tenants)
        .set({ subscriptionActive: active })
        .where(eq(tenants.id, id))
        .returning({ id: tenants.id })
        .all();
      return updated.length > 0;
    },

    async createApiKey(key: ApiKeyRecord) {
      withConstraintErrors("API key", () => db.insert(apiKeys).values(key).run());
    },

    async findApiKeyByHash(hash) {
      dropIfChangedElsewhere();
      let found = keysByHash.get(hash);
      if (found === undefined) {
        const row = selectKeyByHash.get({ hash });
        if (row === null) return null;
        found = toFoundKey(row);
        remember(hash, found);
      }
      const now = clock.now();
      const lastUsedAt = found.key.lastUsedAt;
      if (lastUseIsStale(lastUsedAt, now)) {
        try {
          touchKey.run({ id: found.key.id, at: now.getTime() });
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
        .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
        .all();
    },

    async accessOf(tenantId, apiKeyId) {
      const row = selectAccess.get({ tenant: tenantId, key: apiKeyId ?? null });
      if (!row) return null;
      return {
        subscriptionActive: row.subscription_active === 1,
        keyLive: apiKeyId === undefined || row.key_live === 1,
      };
    },

    async revokeApiKeys(match, at) {
      const target = revokeTarget(match);
      const condition =
        "id" in target
          ? eq(apiKeys.id, target.id)
          : // The given text may be the displayed prefix or any leading part of it.
            sql`substr(${apiKeys.prefix}, 1, ${target.prefix.length}) = ${target.prefix}`;
      forgetKeys();
      return db.transaction(
        (tx) => {
          const found = tx
            .select()
            .from(apiKeys)
            .where(and(condition, isNull(apiKeys.revokedAt)))
            .all();
          const targets = keysToRevoke(target, found);
          for (const key of targets) {
            tx.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, key.id)).run();
            key.revokedAt = at;
          }
          return targets;
        },
        { behavior: "immediate" },
      );
    },
  };
};
