import type { PromptrunConfig } from "../config.ts";
import { invalid } from "../errors.ts";
import { parseModelRef } from "./model-ref.ts";

export type ProviderConfig = Pick<PromptrunConfig, "providers" | "devModel">;

/** Built-in development models (only `dev:echo`). */
const DEV_MODELS = ["echo"];

/** Provider prefixes this server can call: openai, anthropic, dev (unless turned off), PROMPTRUN_PROVIDERS. */
export function knownProviders(config: ProviderConfig): string[] {
  return [
    "openai",
    "anthropic",
    ...(config.devModel ? ["dev"] : []),
    ...config.providers.compatible.map((endpoint) => endpoint.name),
  ];
}

/**
 * Rejects (PromptrunError "invalid") a model ref whose provider this server does not know, or a
 * dev model that is unknown or turned off. Checked at push and again at run time, since a stored
 * version may outlive the configuration it was pushed under.
 */
export function assertKnownModel(modelRef: string, config: ProviderConfig): void {
  const { provider, model } = parseModelRef(modelRef);
  if (provider === "dev") {
    if (!config.devModel)
      throw invalid(
        `model '${modelRef}': the development model is turned off on this server (PROMPTRUN_DEV_MODEL=false)`,
      );
    if (!DEV_MODELS.includes(model))
      throw invalid(`unknown dev model '${model}' (dev:echo is the built-in one)`);
    return;
  }
  if (!knownProviders(config).includes(provider))
    throw invalid(`unknown model provider '${provider}' (known: ${knownProviders(config).join(", ")})`);
}
