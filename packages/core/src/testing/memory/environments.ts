import type { EnvironmentRecord, EnvironmentStore } from "../../ports.ts";
import { copy } from "./paging.ts";
import { type MemoryReferences, requireReference } from "./references.ts";

export interface MemoryEnvironmentStore extends EnvironmentStore {
  has(id: string): boolean;
}

export function createMemoryEnvironmentStore(references: MemoryReferences): MemoryEnvironmentStore {
  /** key: `${tenantId}/${name}` */
  const environments = new Map<string, EnvironmentRecord>();
  /** environmentId → key → encrypted value */
  const envVars = new Map<string, Map<string, string>>();

  const has = (id: string) => [...environments.values()].some((environment) => environment.id === id);

  return {
    has,
    async ensure(tenantId, name, newId, at) {
      const key = `${tenantId}/${name}`;
      let environment = environments.get(key);
      if (!environment) {
        requireReference(references.tenant(tenantId), `environment ${name}`);
        environment = { id: newId, tenantId, name, createdAt: at };
        environments.set(key, environment);
      }
      return copy(environment);
    },
    async get(tenantId, name) {
      const environment = environments.get(`${tenantId}/${name}`);
      return environment ? copy(environment) : null;
    },
    async list(tenantId) {
      return [...environments.values()]
        .filter((environment) => environment.tenantId === tenantId)
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map(copy);
    },
    async getEnvVars(environmentId) {
      return Object.fromEntries(envVars.get(environmentId) ?? []);
    },
    async setEnvVars(environmentId, encryptedValues) {
      requireReference(has(environmentId), "env var");
      const values = envVars.get(environmentId) ?? new Map<string, string>();
      for (const [key, value] of Object.entries(encryptedValues)) values.set(key, value);
      envVars.set(environmentId, values);
    },
    async unsetEnvVars(environmentId, keys) {
      const values = envVars.get(environmentId);
      for (const key of keys) values?.delete(key);
    },
    async allEncryptedValues() {
      return [...envVars.entries()].flatMap(([environmentId, values]) =>
        [...values.entries()].map(([key, value]) => ({ environmentId, key, value })),
      );
    },
  };
}
