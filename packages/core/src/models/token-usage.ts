import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import type { TokenUsage } from "@promptrun/contract";
import type { LanguageModelUsage } from "ai";

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
 * DESIGN "Runs": input counts all prompt tokens including cached ones, output all completion
 * tokens including reasoning, total = input + output. From the AI SDK's usage (`ai` 7 names).
 */
export function tokenUsageFromSdk(usage: LanguageModelUsage): TokenUsage {
  const details = usage.inputTokenDetails;
  const input =
    usage.inputTokens ??
    count(details?.noCacheTokens) + count(details?.cacheReadTokens) + count(details?.cacheWriteTokens);
  return build(
    count(input),
    count(details?.cacheReadTokens),
    count(usage.outputTokens),
    count(usage.outputTokenDetails?.reasoningTokens),
  );
}

/** Same, from the provider-level usage a language-model middleware sees. */
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
