export { buildCost, costBlock, sumCostBlocks, zeroCostBlock } from "./cost.ts";
export { lookupModelPrice, type PriceLookup, type ResolvedPrice } from "./model-price.ts";
