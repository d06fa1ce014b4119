import { invalid } from "../errors.ts";
import type { Store } from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";
import { DEFAULT_ENVIRONMENT } from "./default-environment.ts";

/**
 * The decrypted env vars of a tenant's environment, for the engine. The default environment
 * exists for every tenant even before anything is stored in it.
 */
export async function loadEnvironmentVars(
  store: Pick<Store, "environments">,
  secrets: SecretBox,
  tenantId: string,
  environmentName: string,
): Promise<Record<string, string>> {
  const environment = await store.environments.get(tenantId, environmentName);
  if (!environment) {
    if (environmentName === DEFAULT_ENVIRONMENT) return {};
    throw invalid(`unknown environment '${environmentName}'`);
  }
  const encrypted = await store.environments.getEnvVars(environment.id);
  const values: Record<string, string> = {};
  for (const [key, ciphertext] of Object.entries(encrypted)) values[key] = secrets.decrypt(ciphertext);
  return values;
}
