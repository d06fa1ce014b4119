import { calcPrice } from "@pydantic/genai-prices";

/** The label of every model the server does not know: one series, whatever tenants write. */
export const OTHER_MODEL_LABEL = "other";
/** Longest label kept; known ids are far shorter, so this only guards odd data set entries. */
export const MAX_MODEL_LABEL_LENGTH = 64;

const BUILT_IN_MODELS = new Set(["dev:echo"]);
const MAX_CACHED_LABELS = 1_024;
/** model ref → label: the data set's search costs tens of µs, and a run asks once per attempt. */
const cachedLabels = new Map<string, string>();

function labelOf(modelRef: string, priceOverrides: Record<string, unknown>): string {
  if (BUILT_IN_MODELS.has(modelRef) || Object.hasOwn(priceOverrides, modelRef)) return modelRef;
  const separator = modelRef.indexOf(":");
  if (separator <= 0) return OTHER_MODEL_LABEL;
  const provider = modelRef.slice(0, separator);
  const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, modelRef.slice(separator + 1), {
    providerId: provider,
  });
  // The data set's own id, never the tenant's spelling: a pattern match cannot mint new series.
  return found ? `${provider}:${found.model.id}` : OTHER_MODEL_LABEL;
}

/**
 * The `model` label of run and provider metrics. Prompts are tenant text, so a label is
 * `provider:model` only for models the server knows — the built-in `dev:echo`, a configured price
 * override, or a model of the bundled price data set (under its canonical id) — of at most
 * MAX_MODEL_LABEL_LENGTH characters; everything else is `other`. This bounds the series count
 * (and the scrape size) and keeps one tenant's model names out of what the endpoint shows.
 */
export function metricsModelLabel(modelRef: string, priceOverrides: Record<string, unknown>): string {
  let label = cachedLabels.get(modelRef);
  if (label !== undefined) return label;
  label = labelOf(modelRef, priceOverrides);
  if (label.length > MAX_MODEL_LABEL_LENGTH) label = OTHER_MODEL_LABEL;
  if (cachedLabels.size >= MAX_CACHED_LABELS) cachedLabels.clear();
  cachedLabels.set(modelRef, label);
  return label;
}
