import { calcPrice, type TieredPrices } from "@pydantic/genai-prices";
import type { ModelPrice } from "../config.ts";

/** Prices of one model for one call, in US dollars. */
export interface ResolvedPrice {
  inputPerMillion: number;
  cachedInputPerMillion: number;
  outputPerMillion: number;
  perWebSearch: number;
}

export interface PriceLookup {
  /** `config.priceOverrides`: `provider:model` → price; wins over the data set. */
  overrides: Record<string, ModelPrice>;
  /** All prompt tokens of the call: picks the tier of tiered (long-context) prices. */
  inputTokens: number;
  /** When the call happened: the data set has dated prices. */
  at: Date;
}

const FREE: ResolvedPrice = {
  inputPerMillion: 0,
  cachedInputPerMillion: 0,
  outputPerMillion: 0,
  perWebSearch: 0,
};

/** Same rule as genai-prices: the highest tier whose start the prompt size exceeds. */
const tierPrice = (value: number | TieredPrices | undefined, inputTokens: number): number | undefined => {
  if (value === undefined || typeof value === "number") return value;
  let price = value.base;
  for (const tier of value.tiers) if (inputTokens > tier.start) price = tier.price;
  return price;
};

const fromOverride = (price: ModelPrice): ResolvedPrice => ({
  inputPerMillion: price.inputPerMillion,
  cachedInputPerMillion: price.cachedInputPerMillion ?? price.inputPerMillion,
  outputPerMillion: price.outputPerMillion,
  perWebSearch: price.perWebSearch ?? 0,
});

type DataSetPrice = NonNullable<ReturnType<typeof calcPrice>>["model_price"];

const MINUTE_MS = 60_000;
const MAX_CACHED_PRICES = 1_024;
/** provider, model and minute → the data set's price (or null). */
const cachedPrices = new Map<string, DataSetPrice | null>();

/**
 * The data set's search costs tens of µs per run; its prices change at most by the minute (dated
 * prices, time-of-day discounts), so one lookup per model per minute gives the same answers.
 */
function dataSetPrice(provider: string, model: string, at: Date): DataSetPrice | null {
  const key = `${provider}\u0000${model}\u0000${Math.floor(at.getTime() / MINUTE_MS)}`;
  const cached = cachedPrices.get(key);
  if (cached !== undefined) return cached;
  const found = calcPrice({ input_tokens: 0, output_tokens: 0 }, model, {
    providerId: provider,
    timestamp: at,
  });
  const price = found ? found.model_price : null;
  if (cachedPrices.size >= MAX_CACHED_PRICES) cachedPrices.clear();
  cachedPrices.set(key, price);
  return price;
}

/**
 * The price of `provider:model`: a configured override, then the bundled `@pydantic/genai-prices`
 * data set (offline; never fetched at run time). `dev:*` models are free. null when unknown:
 * callers must then mark the cost `priced: false`, never report a silent $0.
 */
export function lookupModelPrice(modelRef: string, lookup: PriceLookup): ResolvedPrice | null {
  const override = lookup.overrides[modelRef];
  if (override) return fromOverride(override);
  const separator = modelRef.indexOf(":");
  if (separator <= 0) return null;
  const provider = modelRef.slice(0, separator);
  const model = modelRef.slice(separator + 1);
  if (provider === "dev") return FREE;
  const prices = dataSetPrice(provider, model, lookup.at);
  if (!prices) return null;
  const input = tierPrice(prices.input_mtok, lookup.inputTokens);
  const output = tierPrice(prices.output_mtok, lookup.inputTokens);
  if (input === undefined || output === undefined) return null;
  const webSearchesPerThousand = tierPrice(prices.web_searches_kcount, lookup.inputTokens);
  return {
    inputPerMillion: input,
    cachedInputPerMillion: tierPrice(prices.cache_read_mtok, lookup.inputTokens) ?? input,
    outputPerMillion: output,
    perWebSearch: webSearchesPerThousand === undefined ? 0 : webSearchesPerThousand / 1000,
  };
}
