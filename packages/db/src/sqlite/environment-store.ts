import type { EnvironmentRecord, EnvironmentStore } from "@promptrun/core";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { environments, envVars } from "../schema/sqlite.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

/** Environments remembered at once; beyond it the oldest entry goes. */
const MAX_CACHED_ENVIRONMENTS = 10_000;

interface EnvironmentRow {
  id: string;
  tenant_id: string;
  name: string;
  created_at: number;
}

/**
 * Every create-run looks its environment up by name: one prepared statement, and found
 * environments are remembered. Environments are never renamed or deleted; the memory is still
 * cleared when ANOTHER connection commits (`PRAGMA data_version`), so nothing outlives a change
 * made elsewhere.
 */
export const createEnvironmentStore = ({ db, raw, dataVersion }: SqliteContext): EnvironmentStore => {
  const selectByName = raw.prepare<EnvironmentRow, { tenantId: string; name: string }>(
    "SELECT id, tenant_id, name, created_at FROM environments WHERE tenant_id = $tenantId AND name = $name",
  );
  // Read for every run the engine starts: prepared once.
  const selectEnvVars = raw.prepare<{ key: string; value: string }, { environmentId: string }>(
    "SELECT key, value FROM env_vars WHERE environment_id = $environmentId ORDER BY key",
  );
  const found = new Map<string, EnvironmentRecord>();
  let seenDataVersion = -1;

  const byName = (tenantId: string, name: string): EnvironmentRecord | null => {
    const current = dataVersion();
    if (current !== seenDataVersion) {
      seenDataVersion = current;
      found.clear();
    }
    const cacheKey = `${tenantId}\u0000${name}`;
    const hit = found.get(cacheKey);
    if (hit !== undefined) return { ...hit };
    const row = selectByName.get({ tenantId, name });
    if (row === null) return null;
    const environment: EnvironmentRecord = {
      id: row.id,
      tenantId: row.tenant_id,
      name: row.name,
      createdAt: new Date(row.created_at),
    };
    if (found.size >= MAX_CACHED_ENVIRONMENTS) {
      const oldest = found.keys().next().value;
      if (oldest !== undefined) found.delete(oldest);
    }
    found.set(cacheKey, environment);
    return { ...environment };
  };

  return {
    async ensure(tenantId, name, newId, at) {
      return db.transaction(
        (tx) => {
          withConstraintErrors("environment", () =>
            tx
              .insert(environments)
              .values({ id: newId, tenantId, name, createdAt: at })
              .onConflictDoNothing({
                target: [environments.tenantId, environments.name],
              })
              .run(),
          );
          const environment = byName(tenantId, name);
          if (!environment) throw new Error(`environment ${name} vanished inside its transaction`);
          return environment;
        },
        { behavior: "immediate" },
      );
    },

    async get(tenantId, name) {
      return byName(tenantId, name);
    },

    async list(tenantId) {
      return db
        .select()
        .from(environments)
        .where(eq(environments.tenantId, tenantId))
        .orderBy(asc(environments.name))
        .all();
    },

    async getEnvVars(environmentId) {
      const rows = selectEnvVars.all({ environmentId });
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
      withConstraintErrors("environment variable", () =>
        db
          .insert(envVars)
          .values(rows)
          .onConflictDoUpdate({
            target: [envVars.environmentId, envVars.key],
            set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at` },
          })
          .run(),
      );
    },

    async unsetEnvVars(environmentId, keys) {
      if (keys.length === 0) return;
      db.delete(envVars)
        .where(and(eq(envVars.environmentId, environmentId), inArray(envVars.key, keys)))
        .run();
    },

    async allEncryptedValues() {
      return db
        .select({ environmentId: envVars.environmentId, key: envVars.key, value: envVars.value })
        .from(envVars)
        .orderBy(asc(envVars.environmentId), asc(envVars.key))
        .all();
    },
  };
};
