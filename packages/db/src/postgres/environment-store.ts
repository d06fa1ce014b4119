import type { EnvironmentStore } from "@promptrun/core";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { environments, envVars } from "../schema/postgres.ts";
import type { PostgresContext } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";

export const createEnvironmentStore = ({ db }: PostgresContext): EnvironmentStore => {
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
      return byName(tenantId, name);
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
