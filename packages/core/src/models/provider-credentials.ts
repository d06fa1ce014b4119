import { invalid } from "../errors.ts";

export interface ProviderCredentialSource {
  /** Provider prefix as in model refs (`openai`, `anthropic`, `ollama`). */
  name: string;
  /** What the operator configured (trusted). */
  server: { apiKey?: string | undefined; baseUrl?: string | undefined };
  /** Whether a call without a key is pointless (hosted APIs) or fine (local servers). */
  keyRequired: boolean;
}

export interface ProviderCredentials {
  apiKey: string | undefined;
  baseUrl: string | undefined;
  /** The base URL came from the tenant: connect through the private-range guard. */
  tenantBaseUrl: boolean;
}

/** `ollama` → `OLLAMA`, `my-llm` → `MY_LLM`: env var keys are `^[A-Z][A-Z0-9_]*$`. */
export const envPrefixOf = (provider: string): string => provider.toUpperCase().replace(/[^A-Z0-9]/g, "_");

const nonEmpty = (value: string | undefined): string | undefined => (value ? value : undefined);

/**
 * docs/PRODUCT-RULES.md "Environments, env vars and webhooks": the tenant's variables (environment env vars overlaid with the run's
 * envVars) win over the server's configuration. The server's key is only ever sent to the
 * server's own base URL: a tenant base URL needs a tenant key too.
 */
export function resolveProviderCredentials(
  source: ProviderCredentialSource,
  tenantEnv: Record<string, string>,
): ProviderCredentials {
  const prefix = envPrefixOf(source.name);
  const tenantKey = nonEmpty(tenantEnv[`${prefix}_API_KEY`]);
  const tenantUrl = nonEmpty(tenantEnv[`${prefix}_BASE_URL`]);
  if (tenantUrl) {
    if (!tenantKey && (source.keyRequired || source.server.apiKey)) {
      throw invalid(
        `${prefix}_BASE_URL from the environment requires ${prefix}_API_KEY from the environment too`,
      );
    }
    return { apiKey: tenantKey, baseUrl: tenantUrl, tenantBaseUrl: true };
  }
  const apiKey = tenantKey ?? nonEmpty(source.server.apiKey);
  if (!apiKey && source.keyRequired) throw invalid(`no API key for ${source.name}: set ${prefix}_API_KEY`);
  return { apiKey, baseUrl: nonEmpty(source.server.baseUrl), tenantBaseUrl: false };
}
