import { describe, expect, test } from "bun:test";
import { buildCost, costBlock, sumCostBlocks, zeroCostBlock } from "./cost.ts";
import { lookupModelPrice } from "./model-price.ts";

const gpt4oMini = lookupModelPrice("openai:gpt-4o-mini", {
  overrides: {},
  inputTokens: 1_000_000,
  at: new Date("2026-01-15T00:00:00Z"),
});

describe("cost", () => {
  test("applies the product cost formulas to gpt-4o-mini usage with cached and reasoning tokens", () => {
    // 1M prompt tokens of which 200k cached; 500k completion tokens of which 100k reasoning.
    const block = costBlock(
      { input: 1_000_000, inputCached: 200_000, output: 500_000, reasoning: 100_000, total: 1_500_000 },
      gpt4oMini,
    );
    expect(block).toEqual({
      input: 0.12, // 800k × $0.15/M
      cachedInput: 0.015, // 200k × $0.075/M
      output: 0.3, // 500k × $0.60/M (reasoning is part of output)
      webSearch: 0,
      total: 0.435,
      priced: true,
    });
  });

  test("web searches are priced per search", () => {
    const block = costBlock({ input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 }, gpt4oMini, 3);
    expect(block.webSearch).toBe(0.03);
    expect(block.total).toBe(0.03);
  });

  test("an unknown price is never a silent $0", () => {
    const block = costBlock({ input: 10, inputCached: 0, output: 10, reasoning: 0, total: 20 }, null);
    expect(block).toEqual({ ...zeroCostBlock(), priced: false });
  });

  test("sums retry blocks without float noise and totals success + retries", () => {
    const small = costBlock(
      { input: 1, inputCached: 0, output: 0, reasoning: 0, total: 1 },
      {
        inputPerMillion: 100_000,
        cachedInputPerMillion: 0,
        outputPerMillion: 0,
        perWebSearch: 0,
      },
    ); // $0.1
    const double = costBlock(
      { input: 2, inputCached: 0, output: 0, reasoning: 0, total: 2 },
      {
        inputPerMillion: 100_000,
        cachedInputPerMillion: 0,
        outputPerMillion: 0,
        perWebSearch: 0,
      },
    ); // $0.2
    const retries = sumCostBlocks([small, double]);
    expect(retries.total).toBe(0.3);
    expect(buildCost(small, retries)).toEqual({ success: small, retries, total: 0.4, currency: "USD" });
    expect(sumCostBlocks([small, zeroCostBlock(false)]).priced).toBe(false);
    expect(sumCostBlocks([])).toEqual(zeroCostBlock());
  });
});
