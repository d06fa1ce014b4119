import { type ApiKeyRecord, PromptrunError, type TenantRecord, type TenantStore } from "@promptrun/core";
import { and, asc, eq, isNull, lte, or, sql } from "drizzle-orm";
import { apiKeys, tenants } from "../schema/postgres.ts";
import type { PostgresContext } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";

/** last_used_at is refreshed at most this often per key, so authentication rarely writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

export const createTenantStore = ({ db, clock }: PostgresContext): TenantStore => ({
  async create(tenant: TenantRecord) {
    await withConstraintErrors("tenant", () => db.insert(tenants).values(tenant));
  },

  async get(id) {
    const [row] = await db.select().from(tenants).where(eq(tenants.id, id));
    return row ?? null;
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
    return updated.length > 0;
  },

  async createApiKey(key: ApiKeyRecord) {
    await withConstraintErrors("API key", () => db.insert(apiKeys).values(key));
  },

  async findApiKeyByHash(hash) {
    const [row] = await db
      .select({ key: apiKeys, tenant: tenants })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)));
    if (!row) return null;
    const now = clock.now();
    const staleBefore = new Date(now.getTime() - LAST_USED_GRANULARITY_MS);
    if (row.key.lastUsedAt === null || row.key.lastUsedAt <= staleBefore) {
      try {
        // Conditional, so several instances authenticating at once write it once.
        await db
          .update(apiKeys)
          .set({ lastUsedAt: now })
          .where(
            and(
              eq(apiKeys.id, row.key.id),
              or(isNull(apiKeys.lastUsedAt), lte(apiKeys.lastUsedAt, staleBefore)),
            ),
          );
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
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  },

  async revokeApiKeys(match, at) {
    const active = isNull(apiKeys.revokedAt);
    let condition: ReturnType<typeof and>;
    if (match.id !== undefined) {
      condition = and(eq(apiKeys.id, match.id), active);
    } else if (match.prefix !== undefined && match.prefix !== "") {
      // The given text may be the displayed prefix or any leading part of it.
      condition = and(sql`left(${apiKeys.prefix}, ${match.prefix.length}) = ${match.prefix}`, active);
    } else {
      throw new PromptrunError("invalid", "revokeApiKeys needs an id or a prefix");
    }
    return db.transaction(async (tx) => {
      // Locked, so a concurrent revoke of the same keys waits and then finds them revoked.
      const targets: ApiKeyRecord[] = await tx
        .select()
        .from(apiKeys)
        .where(condition)
        .orderBy(asc(apiKeys.id))
        .for("update");
      // A prefix naming several keys revokes nothing: the caller must be more specific.
      if (match.id === undefined && targets.length > 1) return [];
      for (const target of targets) {
        await tx.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, target.id));
        target.revokedAt = at;
      }
      return targets;
    });
  },
});
