import { openaiLanguageModelChatOptions, openaiModelCatalog } from "@ai-sdk/openai/internal";
import type { JSONSchema7, LanguageModelV4CallOptions, SharedV4ProviderOptions } from "@ai-sdk/provider";
import type {
  OutputSpec,
  PromptParams,
  ProviderOptions,
  Reasoning,
  ReasoningEffort,
} from "@promptrun/contract";
import { invalid } from "../errors.ts";

/** What of a prompt definition shapes one provider call besides its messages. */
export interface PromptCallFields {
  /** `provider:model`, for error messages. */
  modelRef: string;
  params: PromptParams;
  output?: OutputSpec | null | undefined;
  providerOptions?: ProviderOptions | null | undefined;
}

/**
 * Anthropic thinking budget for a prompt that gives only `reasoning.effort`
 * (docs/providers.md "Reasoning").
 */
export const ANTHROPIC_BUDGET_FOR_EFFORT: Record<ReasoningEffort, number> = {
  minimal: 1_024,
  low: 2_048,
  medium: 8_192,
  high: 24_576,
};

/**
 * The effort an OpenAI-style provider gets for a prompt that gives only `reasoning.budgetTokens`:
 * the smallest level whose Anthropic budget covers it (docs/providers.md "Reasoning").
 */
export function effortForBudget(budgetTokens: number): ReasoningEffort {
  if (budgetTokens <= ANTHROPIC_BUDGET_FOR_EFFORT.minimal) return "minimal";
  if (budgetTokens <= ANTHROPIC_BUDGET_FOR_EFFORT.low) return "low";
  if (budgetTokens <= ANTHROPIC_BUDGET_FOR_EFFORT.medium) return "medium";
  return "high";
}

export type ProviderFamily = "openai" | "anthropic" | "dev" | "compatible";

export const providerFamilyOf = (provider: string): ProviderFamily =>
  provider === "openai" || provider === "anthropic" || provider === "dev" ? provider : "compatible";

const splitRef = (modelRef: string) => {
  const separator = modelRef.indexOf(":");
  return { provider: modelRef.slice(0, separator), modelId: modelRef.slice(separator + 1) };
};

/**
 * Rejects (PromptrunError "invalid") what the provider library itself knows a model cannot take:
 * today `params.reasoning` on an OpenAI model its catalog marks as not reasoning. Cheap (a table
 * lookup): the engine calls it before each provider call, and create-run may call it for a 400.
 */
export function assertModelTakesPromptFields(fields: Omit<PromptCallFields, "output">) {
  const { provider, modelId } = splitRef(fields.modelRef);
  if (provider !== "openai") return;
  const known = openAIChatOptionNames();
  for (const name of Object.keys(fields.providerOptions?.openai ?? {})) {
    if (known && !known.has(name)) {
      throw invalid(
        `${fields.modelRef} cannot take providerOptions.openai.${name}: not an option of the AI SDK's OpenAI chat provider (known: ${[...known].join(", ")})`,
      );
    }
  }
  if (!fields.params.reasoning) return;
  const language = openaiModelCatalog[modelId]?.capabilities?.language;
  if (language?.reasoning.support === false) {
    throw invalid(
      `${fields.modelRef} cannot take params.reasoning: the model does not reason (AI SDK model catalog)`,
    );
  }
}

let openAIOptionNames: Set<string> | null | undefined;

/**
 * The option names the OpenAI chat provider reads (its own options schema): any other key would
 * be stripped by its validation without a word. Null when the schema cannot be read.
 */
function openAIChatOptionNames(): Set<string> | null {
  if (openAIOptionNames !== undefined) return openAIOptionNames;
  const jsonSchema = (openaiLanguageModelChatOptions() as { jsonSchema?: unknown }).jsonSchema as
    | { properties?: Record<string, unknown>; then?: unknown }
    | undefined;
  const properties = typeof jsonSchema?.then === "function" ? undefined : jsonSchema?.properties;
  // Read from the provider, not listed here: the names follow the pinned SDK version.
  openAIOptionNames = properties ? new Set(Object.keys(properties)) : null;
  return openAIOptionNames;
}

const reasoningOptions = (
  family: ProviderFamily,
  reasoning: Reasoning,
): { callReasoning?: ReasoningEffort; options?: Record<string, unknown> } => {
  if (family === "anthropic") {
    const budgetTokens = reasoning.budgetTokens ?? ANTHROPIC_BUDGET_FOR_EFFORT[reasoning.effort ?? "medium"];
    return { options: { thinking: { type: "enabled", budgetTokens } } };
  }
  if (family === "dev") return {};
  // The SDK's portable `reasoning` becomes `reasoning_effort` and is checked against its model
  // catalog (a level the model lacks maps to the nearest one, with a compatibility note).
  return { callReasoning: reasoning.effort ?? effortForBudget(reasoning.budgetTokens ?? 1) };
};

/** The provider-options key a provider reads: its own name (a compatible endpoint's too). */
const optionsKeyOf = (provider: string): string => provider;

/**
 * The AI SDK call fields for a prompt's output, reasoning and provider options. A plain text
 * prompt gets none of them (so it stays on the lean chat path). The user's own
 * `providerOptions` win over what the engine derives (docs/providers.md).
 */
export function promptCallOptions(
  fields: PromptCallFields,
): Pick<LanguageModelV4CallOptions, "responseFormat" | "reasoning" | "providerOptions"> {
  const { provider } = splitRef(fields.modelRef);
  const family = providerFamilyOf(provider);
  const key = optionsKeyOf(provider);
  const derived: Record<string, unknown> = {};
  const call: Pick<LanguageModelV4CallOptions, "responseFormat" | "reasoning" | "providerOptions"> = {};
  const output = fields.output;
  if (output?.format === "json_schema") {
    call.responseFormat = {
      type: "json",
      schema: output.schema as JSONSchema7,
      ...(output.name !== undefined ? { name: output.name } : {}),
      ...(output.description !== undefined ? { description: output.description } : {}),
    };
    // OpenAI-style strict mode only when the prompt asks for it (it constrains the schema).
    if (family === "openai" || family === "compatible") derived.strictJsonSchema = output.strict === true;
  }
  if (fields.params.reasoning) {
    const mapped = reasoningOptions(family, fields.params.reasoning);
    if (mapped.callReasoning) call.reasoning = mapped.callReasoning;
    Object.assign(derived, mapped.options);
  }
  const user = fields.providerOptions ?? {};
  if (Object.keys(derived).length === 0 && Object.keys(user).length === 0) return call;
  const providerOptions: SharedV4ProviderOptions = {};
  for (const [name, options] of Object.entries(user)) providerOptions[name] = options as never;
  if (Object.keys(derived).length > 0) {
    providerOptions[key] = { ...derived, ...(user[key] ?? {}) } as never;
  }
  return { ...call, providerOptions };
}
