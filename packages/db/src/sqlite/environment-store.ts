import type { EnvironmentStore } from "@promptrun/core";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { environments, envVars } from "../schema/sqlite.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

export const createEnvironmentStore = ({ db }: SqliteContext): EnvironmentStore => {
  const byName = (tenantId: string, name: string) =>
    db
      .select()
      .from(environments)
      .where(and(eq(environments.tenantId, tenantId), eq(environments.name, name)))
      .get() ?? null;

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
      const rows = db
        .select({ key: envVars.key, value: envVars.value })
        .from(envVars)
        .where(eq(envVars.environmentId, environmentId))
        .orderBy(asc(envVars.key))
        .all();
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
