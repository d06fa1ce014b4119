import { type Environment, environmentNameSchema } from "@promptrun/contract";
import { DEFAULT_TENANT_QUOTAS, type TenantQuotas } from "../config.ts";
import { invalid, notFound } from "../errors.ts";
import type { Clock, EnvironmentRecord, Store } from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import { createQuotaGuard } from "../services/tenant-quota.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import type { EnvironmentService } from "../services.ts";
import { assertEnvVarLimits } from "./env-var-limits.ts";
import { rotateEncryption } from "./rotate-encryption.ts";

export interface EnvironmentServiceDependencies {
  store: Pick<Store, "environments" | "webhooks" | "runs">;
  secrets: SecretBox;
  clock: Clock;
  newId?: () => string;
  quotas?: Pick<TenantQuotas, "environments">;
}

const assertEnvironmentName = (name: string): string => {
  const parsed = environmentNameSchema.safeParse(name);
  if (!parsed.success) throw invalid(`environment ${parsed.error.issues[0]?.message ?? "is invalid"}`);
  return parsed.data;
};

/**
 * Environments and their env vars. Values are encrypted with the SecretBox before they reach the
 * store and are never returned: listing shows names and keys only.
 */
export function createEnvironmentService(dependencies: EnvironmentServiceDependencies): EnvironmentService {
  const { store, secrets, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7());
  const environmentQuota = createQuotaGuard(
    "environments",
    (dependencies.quotas ?? DEFAULT_TENANT_QUOTAS).environments,
  );

  /** The environment, created when new and the tenant has room for it. */
  const ensureWithinQuota = (tenantId: string, name: string): Promise<EnvironmentRecord> =>
    environmentQuota.exclusive(tenantId, async () => {
      const environments = await store.environments.list(tenantId);
      const found = environments.find((environment) => environment.name === name);
      if (found) return found;
      environmentQuota.assertRoom(environments.length);
      return store.environments.ensure(tenantId, name, newId(), clock.now());
    });

  const describe = async (environment: EnvironmentRecord): Promise<Environment> => ({
    name: environment.name,
    envVarKeys: Object.keys(await store.environments.getEnvVars(environment.id)).sort(),
    createdAt: environment.createdAt.toISOString(),
  });

  const existing = async (tenantId: string, name: string): Promise<EnvironmentRecord> => {
    const environment = await store.environments.get(tenantId, assertEnvironmentName(name));
    if (!environment) throw notFound(`unknown environment '${name}'`);
    return environment;
  };

  return {
    async list(tenantId) {
      const environments = await store.environments.list(tenantId);
      const sorted = [...environments].sort((a, b) => a.name.localeCompare(b.name));
      return Promise.all(sorted.map(describe));
    },

    async ensure(tenantId, name) {
      return describe(await ensureWithinQuota(tenantId, assertEnvironmentName(name)));
    },

    async setEnvVars(tenantId, name, values) {
      assertEnvironmentName(name);
      // Checked on their own first, so a bad request creates no environment.
      const incoming = assertEnvVarLimits(values, `env vars of environment '${name}'`);
      const found = await store.environments.get(tenantId, name);
      const stored = found ? await store.environments.getEnvVars(found.id) : {};
      const merged: Record<string, string> = {};
      for (const [key, ciphertext] of Object.entries(stored)) merged[key] = secrets.decrypt(ciphertext);
      Object.assign(merged, incoming);
      assertEnvVarLimits(merged, `env vars of environment '${name}' (stored + new)`);

      const environment = found ?? (await ensureWithinQuota(tenantId, name));
      const encrypted: Record<string, string> = { ...stored };
      for (const [key, value] of Object.entries(incoming)) encrypted[key] = secrets.encrypt(value);
      await store.environments.setEnvVars(environment.id, encrypted, clock.now());
      return describe(environment);
    },

    async unsetEnvVars(tenantId, name, keys) {
      const environment = await existing(tenantId, name);
      if (keys.length > 0) await store.environments.unsetEnvVars(environment.id, keys);
      return describe(environment);
    },

    rotateEncryption: () => rotateEncryption(store, secrets, clock),
  };
}
