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
