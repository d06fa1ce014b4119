import { type ApiKeyRecord, PromptrunError, type TenantRecord, type TenantStore } from "@promptrun/core";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { apiKeys, tenants } from "../schema/sqlite.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

/** last_used_at is refreshed at most this often per key, so authentication rarely writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

export const createTenantStore = ({ db, clock }: SqliteContext): TenantStore => ({
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
    const row = db
      .select({ key: apiKeys, tenant: tenants })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)))
      .get();
    if (!row) return null;
    const now = clock.now();
    if (
      row.key.lastUsedAt === null ||
      now.getTime() - row.key.lastUsedAt.getTime() >= LAST_USED_GRANULARITY_MS
    ) {
      try {
        db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.key.id)).run();
        row.key.lastUsedAt = now;
      } catch {
        // Bookkeeping only: a busy database must not fail authentication.
      }
    }
    return row;
  },

  async listApiKeys(tenantId) {
    return db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.tenantId, tenantId))
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
      .all();
  },

  async revokeApiKeys(match, at) {
    return db.transaction(
      (tx) => {
        const active = isNull(apiKeys.revokedAt);
        let targets: ApiKeyRecord[];
        if (match.id !== undefined) {
          targets = tx
            .select()
            .from(apiKeys)
            .where(and(eq(apiKeys.id, match.id), active))
            .all();
        } else if (match.prefix !== undefined && match.prefix !== "") {
          // The given text may be the displayed prefix or any leading part of it.
          targets = tx
            .select()
            .from(apiKeys)
            .where(and(sql`substr(${apiKeys.prefix}, 1, ${match.prefix.length}) = ${match.prefix}`, active))
            .all();
          // A prefix naming several keys revokes nothing: the caller must be more specific.
          if (targets.length > 1) return [];
        } else {
          throw new PromptrunError("invalid", "revokeApiKeys needs an id or a prefix");
        }
        for (const target of targets) {
          tx.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, target.id)).run();
          target.revokedAt = at;
        }
        return targets;
      },
      { behavior: "immediate" },
    );
  },
});
