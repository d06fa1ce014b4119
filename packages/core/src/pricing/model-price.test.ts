import { describe, expect, test } from "bun:test";
import { lookupModelPrice } from "./model-price.ts";

const at = new Date("2026-01-15T12:00:00Z");

describe("lookupModelPrice", () => {
  test("reads gpt-4o-mini from the bundled data set (input, cached, output, web search)", () => {
    expect(lookupModelPrice("openai:gpt-4o-mini", { overrides: {}, inputTokens: 1000, at })).toEqual({
      inputPerMillion: 0.15,
      cachedInputPerMillion: 0.075,
      outputPerMillion: 0.6,
      perWebSearch: 0.01,
    });
  });

  test("picks the long-context tier of a tiered Anthropic price by prompt size", () => {
    const short = lookupModelPrice("anthropic:claude-sonnet-4-5", {
      overrides: {},
      inputTokens: 100_000,
      at,
    });
    const long = lookupModelPrice("anthropic:claude-sonnet-4-5", { overrides: {}, inputTokens: 300_000, at });
    expect(short).toMatchObject({ inputPerMillion: 3, cachedInputPerMillion: 0.3, outputPerMillion: 15 });
    expect(long).toMatchObject({ inputPerMillion: 6, outputPerMillion: 22.5 });
  });

  test("a configured override wins and defaults cached input to the input price", () => {
    const price = lookupModelPrice("openai:gpt-4o-mini", {
      overrides: { "openai:gpt-4o-mini": { inputPerMillion: 1, outputPerMillion: 2 } },
      inputTokens: 0,
      at,
    });
    expect(price).toEqual({
      inputPerMillion: 1,
      cachedInputPerMillion: 1,
      outputPerMillion: 2,
      perWebSearch: 0,
    });
  });

  test("prices local models only through overrides", () => {
    expect(lookupModelPrice("ollama:llama3.2", { overrides: {}, inputTokens: 0, at })).toBeNull();
    expect(
      lookupModelPrice("ollama:llama3.2", {
        overrides: { "ollama:llama3.2": { inputPerMillion: 0, outputPerMillion: 0 } },
        inputTokens: 0,
        at,
      }),
    ).toMatchObject({ inputPerMillion: 0, outputPerMillion: 0 });
  });

  test("unknown models are null, dev models are free", () => {
    expect(lookupModelPrice("openai:no-such-model-xyz", { overrides: {}, inputTokens: 0, at })).toBeNull();
    expect(lookupModelPrice("nonsense", { overrides: {}, inputTokens: 0, at })).toBeNull();
    expect(lookupModelPrice("dev:echo", { overrides: {}, inputTokens: 0, at })).toEqual({
      inputPerMillion: 0,
      cachedInputPerMillion: 0,
      outputPerMillion: 0,
      perWebSearch: 0,
    });
  });
});

describe("lookupModelPrice over time", () => {
  const lookupAt = (iso: string) => ({ overrides: {}, inputTokens: 10, at: new Date(iso) });
  const MODEL = "aws:global.openai.gpt-5.6-sol";

  test("dated prices change at their date, also when the lookup is repeated (the cache is per minute)", () => {
    const before = lookupModelPrice(MODEL, lookupAt("2026-08-20T23:59:00Z"));
    const after = lookupModelPrice(MODEL, lookupAt("2026-08-21T00:00:30Z"));
    expect(before?.inputPerMillion).toBe(5);
    expect(after?.inputPerMillion).toBe(4);
    // Asked again, in any order, each instant keeps its own price.
    expect(lookupModelPrice(MODEL, lookupAt("2026-08-20T23:59:30Z"))?.inputPerMillion).toBe(5);
    expect(lookupModelPrice(MODEL, lookupAt("2026-08-21T00:00:10Z"))?.inputPerMillion).toBe(4);
  });

  test("an unknown model stays unknown on a repeated lookup", () => {
    expect(lookupModelPrice("openai:no-such-model-xyz", lookupAt("2026-11-22T00:00:00Z"))).toBeNull();
    expect(lookupModelPrice("openai:no-such-model-xyz", lookupAt("2026-11-22T00:00:01Z"))).toBeNull();
  });
});
