import type { Cost, CostBlock, TokenUsage } from "@promptrun/contract";
import type { ResolvedPrice } from "./model-price.ts";

/** Float noise (0.1 + 0.2) rounded away; 12 decimals is far below a billable amount. */
const usd = (amount: number): number => Number(amount.toFixed(12));

export const zeroCostBlock = (priced = true): CostBlock => ({
  input: 0,
  cachedInput: 0,
  output: 0,
  webSearch: 0,
  total: 0,
  priced,
});

/**
 * docs/PRODUCT-RULES.md "Token usage and cost": input = (input − inputCached) × input price, cachedInput = inputCached ×
 * cached price, output = output × output price, webSearch = searches × price per search.
 * An unknown price (null) gives zeros with `priced: false`.
 */
export function costBlock(usage: TokenUsage, price: ResolvedPrice | null, webSearches = 0): CostBlock {
  if (!price) return zeroCostBlock(false);
  const input = ((usage.input - usage.inputCached) * price.inputPerMillion) / 1_000_000;
  const cachedInput = (usage.inputCached * price.cachedInputPerMillion) / 1_000_000;
  const output = (usage.output * price.outputPerMillion) / 1_000_000;
  const webSearch = webSearches * price.perWebSearch;
  return {
    input: usd(input),
    cachedInput: usd(cachedInput),
    output: usd(output),
    webSearch: usd(webSearch),
    total: usd(input + cachedInput + output + webSearch),
    priced: true,
  };
}

/** Adds blocks (several failed attempts); unpriced if any of them is. */
export function sumCostBlocks(blocks: CostBlock[]): CostBlock {
  const sum = zeroCostBlock(blocks.every((block) => block.priced !== false));
  for (const block of blocks) {
    sum.input += block.input;
    sum.cachedInput += block.cachedInput;
    sum.output += block.output;
    sum.webSearch += block.webSearch;
  }
  sum.input = usd(sum.input);
  sum.cachedInput = usd(sum.cachedInput);
  sum.output = usd(sum.output);
  sum.webSearch = usd(sum.webSearch);
  sum.total = usd(sum.input + sum.cachedInput + sum.output + sum.webSearch);
  return sum;
}

/** cost.total = success.total + retries.total, in US dollars. */
export const buildCost = (success: CostBlock, retries: CostBlock): Cost => ({
  success,
  retries,
  total: usd(success.total + retries.total),
  currency: "USD",
});
