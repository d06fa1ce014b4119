import type { LanguageModelV4CallOptions, SharedV4Warning } from "@ai-sdk/provider";
import { invalid, PromptrunError } from "../errors.ts";

/**
 * Sampling params a provider has always been allowed to drop with a warning (an old prompt file
 * keeps meaning what it meant): these warnings stay non-fatal (docs/providers.md).
 */
const TOLERATED_FEATURES = new Set([
  "temperature",
  "topP",
  "topK",
  "seed",
  "frequencyPenalty",
  "presencePenalty",
  "maxOutputTokens",
  "stopSequences",
]);

/** The prompt field a provider warning is about, or null when the warning is harmless. */
function promptFieldOf(warning: SharedV4Warning, call: LanguageModelV4CallOptions): string | null {
  if (warning.type === "compatibility" || warning.type === "deprecated") return null;
  if (warning.type === "other") {
    // A model that takes no system message has always had it dropped (an old prompt keeps working).
    if (/system message/i.test(warning.message)) return null;
    return call.providerOptions ? "providerOptions" : null;
  }
  const feature = warning.feature;
  if (TOLERATED_FEATURES.has(feature)) return null;
  if (/reasoning|thinking|effort/i.test(feature) && call.reasoning !== undefined) return "params.reasoning";
  // A provider option the prompt set by name (`providerOptions.openai.reasoningSummary`).
  for (const [provider, options] of Object.entries(call.providerOptions ?? {})) {
    if (Object.hasOwn(options, feature)) return `providerOptions.${provider}.${feature}`;
  }
  if (/thinking/i.test(feature) && call.providerOptions?.anthropic?.thinking !== undefined) {
    // The engine sets Anthropic's thinking only for params.reasoning.
    return "params.reasoning";
  }
  if (/responseFormat|structuredOutput|json/i.test(feature)) return "output";
  if (feature.startsWith("providerOptions")) return feature;
  if (/file|image|media|pdf|audio/i.test(feature)) return "messages";
  return feature;
}

const detailOf = (warning: SharedV4Warning): string => {
  if (warning.type === "other") return warning.message;
  if (warning.type === "deprecated") return warning.message;
  return warning.details ?? `${warning.feature} is not supported`;
};

/**
 * Throws (PromptrunError "invalid", never retried) for the first warning that says the provider
 * dropped or changed something the prompt asked for: never a silently dropped field.
 */
export function assertNoDroppedFields(
  modelRef: string,
  warnings: readonly SharedV4Warning[],
  call: LanguageModelV4CallOptions,
): void {
  for (const warning of warnings) {
    const field = promptFieldOf(warning, call);
    if (field !== null) throw invalid(`${modelRef} cannot take ${field}: ${detailOf(warning)}`);
  }
}

/** The names of the AI SDK errors that mean "this request cannot be made" (not transient). */
const REQUEST_SHAPE_ERRORS = new Set([
  "AI_UnsupportedFunctionalityError",
  "AI_InvalidArgumentError",
  "AI_InvalidPromptError",
]);

/**
 * An error thrown while the provider library built the request (an unsupported file type, a bad
 * provider option…) as a non-retried PromptrunError naming the model; other errors unchanged.
 */
export function requestShapeError(modelRef: string, error: unknown): unknown {
  if (PromptrunError.isInstance(error)) return error;
  if (!(error instanceof Error) || !REQUEST_SHAPE_ERRORS.has(error.name)) return error;
  return invalid(`${modelRef} cannot take this prompt: ${error.message}`);
}
