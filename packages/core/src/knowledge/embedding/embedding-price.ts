import { calcPrice } from "@pydantic/genai-prices";
import type { ModelPrice } from "../../config.ts";
import type { DocumentCost } from "../ports.ts";

/** Float noise rounded away, as run costs are (pricing/cost.ts). */
const usd = (amount: number): number => Number(amount.toFixed(12));

/**
 * US dollars per million input tokens of an embedding model: `priceOverrides` first, then the
 * bundled `@pydantic/genai-prices` data (which knows OpenAI's embedding models; it has no output
 * price, so pricing/model-price.ts, built for chat models, does not apply). null when unknown.
 */
export function embeddingPricePerMillion(
  ref: string,
  overrides: Record<string, ModelPrice>,
  at: Date,
): number | null {
  const override = overrides[ref];
  if (override) return override.inputPerMillion;
  const separator = ref.indexOf(":");
  const provider = ref.slice(0, separator);
  if (provider === "dev") return 0;
  const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, ref.slice(separator + 1), {
    providerId: provider,
    timestamp: at,
  });
  const input = found?.model_price.input_mtok;
  if (input === undefined) return null;
  return typeof input === "number" ? input : input.base;
}

/** What `tokens` input tokens cost; `priced: false` (and 0) when the price is unknown, never a silent $0. */
export const embeddingCost = (pricePerMillion: number | null, tokens: number): DocumentCost =>
  pricePerMillion === null
    ? { total: 0, priced: false }
    : { total: usd((tokens * pricePerMillion) / 1_000_000), priced: true };

/** Adds costs (a document's batches, a run's query embeddings); unpriced if any is. */
export const addCosts = (a: DocumentCost, b: DocumentCost): DocumentCost => ({
  total: usd(a.total + b.total),
  priced: a.priced && b.priced,
});
