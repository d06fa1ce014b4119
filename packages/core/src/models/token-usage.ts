import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import type { TokenUsage } from "@promptrun/contract";

const count = (value: number | undefined): number =>
  value !== undefined && Number.isFinite(value) ? value : 0;

const build = (input: number, inputCached: number, output: number, reasoning: number): TokenUsage => ({
  input,
  inputCached: Math.min(inputCached, input),
  output,
  reasoning: Math.min(reasoning, output),
  total: input + output,
});

/**
 * From the provider-level usage a language-model middleware sees: input counts all prompt
 * tokens including cached ones, output all completion tokens including reasoning,
 * total = input + output (docs/PRODUCT-RULES.md, "Token usage and cost").
 */
export function tokenUsageFromProvider(usage: LanguageModelV4Usage): TokenUsage {
  const inputTokens = usage.inputTokens;
  const input =
    inputTokens.total ??
    count(inputTokens.noCache) + count(inputTokens.cacheRead) + count(inputTokens.cacheWrite);
  return build(
    count(input),
    count(inputTokens.cacheRead),
    count(usage.outputTokens.total),
    count(usage.outputTokens.reasoning),
  );
}
