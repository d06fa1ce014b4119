import type { EnvironmentRecord, EnvironmentStore } from "@promptrun/core";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { environments, envVars } from "../schema/postgres.ts";
import type { PostgresContext } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";
import { createReadCache } from "./read-cache.ts";

/** Environments remembered at once. */
const MAX_CACHED_ENVIRONMENTS = 10_000;

/**
 * create-run checks its environment by name on every request: found environments are remembered.
 * Environments are never deleted or renamed and a miss is not remembered, so a remembered one
 * stays right; it still expires with the TTL and is cleared with the other caches.
 */
export const createEnvironmentStore = ({ db, changes, cacheTtlMs }: PostgresContext): EnvironmentStore => {
  const found = createReadCache<EnvironmentRecord>({
    maxEntries: MAX_CACHED_ENVIRONMENTS,
    ttlMs: cacheTtlMs,
  });
  changes.register(() => found.clear());

  const byName = async (tenantId: string, name: string) => {
    const [row] = await db
      .select()
      .from(environments)
      .where(and(eq(environments.tenantId, tenantId), eq(environments.name, name)));
    return row ?? null;
  };

  return {
    async ensure(tenantId, name, newId, at) {
      // A concurrent ensure of the same name makes this insert wait for its commit and then do
      // nothing; the read after it (a new snapshot) sees the winner's row.
      await withConstraintErrors("environment", () =>
        db
          .insert(environments)
          .values({ id: newId, tenantId, name, createdAt: at })
          .onConflictDoNothing({ target: [environments.tenantId, environments.name] }),
      );
      const environment = await byName(tenantId, name);
      if (!environment) throw new Error(`environment ${name} vanished after it was ensured`);
      return environment;
    },

    async get(tenantId, name) {
      const environment = await found.get(`${tenantId}\u0000${name}`, () => byName(tenantId, name));
      return environment === null ? null : { ...environment };
    },

    async list(tenantId) {
      return db
        .select()
        .from(environments)
        .where(eq(environments.tenantId, tenantId))
        .orderBy(asc(environments.name));
    },

    async getEnvVars(environmentId) {
      const rows = await db
        .select({ key: envVars.key, value: envVars.value })
        .from(envVars)
        .where(eq(envVars.environmentId, environmentId))
        .orderBy(asc(envVars.key));
      return Object.fromEntries(rows.map((row) => [row.key, row.value]));
    },

    async setEnvVars(environmentId, encryptedValues, at) {
      const rows = Object.entries(encryptedValues).map(([key, value]) => ({
        environmentId,
        key,
        value,
        updatedAt: at,
      }));
      if (rows.length === 0) return;
      await withConstraintErrors("environment variable", () =>
        db
          .insert(envVars)
          .values(rows)
          .onConflictDoUpdate({
            target: [envVars.environmentId, envVars.key],
            set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at` },
          }),
      );
    },

    async unsetEnvVars(environmentId, keys) {
      if (keys.length === 0) return;
      await db
        .delete(envVars)
        .where(and(eq(envVars.environmentId, environmentId), inArray(envVars.key, keys)));
    },

    async allEncryptedValues() {
      return db
        .select({ environmentId: envVars.environmentId, key: envVars.key, value: envVars.value })
        .from(envVars)
        .orderBy(asc(envVars.environmentId), asc(envVars.key));
    },
  };
};
