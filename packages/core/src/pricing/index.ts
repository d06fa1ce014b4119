export { buildCost, costBlock, sumCostBlocks, zeroCostBlock } from "./cost.ts";
export { MAX_MODEL_LABEL_LENGTH, metricsModelLabel, OTHER_MODEL_LABEL } from "./metrics-model-label.ts";
export { lookupModelPrice, type PriceLookup, type ResolvedPrice } from "./model-price.ts";
