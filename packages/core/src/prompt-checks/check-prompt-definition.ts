import type { PromptDefinition } from "@promptrun/contract";
import { invalid, PromptrunError } from "../errors.ts";
import { compileJsonSchema } from "../json-schema/compile-json-schema.ts";
import { knownProviders, type ProviderConfig } from "../models/known-providers.ts";
import { checkMessageTemplates } from "./message-templates.ts";
import { checkRetrieval } from "./retrieval.ts";
import { checkToolDefinitions } from "./tool-definitions.ts";

/** `output.schema` must compile as JSON Schema draft 2020-12 (docs/PRODUCT-RULES.md "Prompts and versions"). */
function checkOutputSchema(output: PromptDefinition["output"]): void {
  if (output?.format !== "json_schema") return;
  try {
    compileJsonSchema(output.schema);
  } catch (error) {
    if (PromptrunError.isInstance(error)) throw invalid(`output.schema: ${error.message}`);
    throw error;
  }
}

/** Each `providerOptions` key names a provider this server knows, as a model's prefix must. */
function checkProviderOptions(options: PromptDefinition["providerOptions"], providers: ProviderConfig): void {
  if (!options) return;
  const known = knownProviders(providers);
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw invalid(`providerOptions.${key}: unknown provider '${key}' (known: ${known.join(", ")})`);
  }
}

/**
 * The push-time checks of a prompt file beyond its zod schema: templates and parts, the output
 * schema, provider options, tools, retrieval. Throws PromptrunError `invalid` naming the field by its path
 * (`output.schema: …`, `messages[2].content[1].image: …`, `tools[1].parameters: …`). Checks, never changes: what is
 * stored is the file as parsed, so an old file keeps its content hash.
 */
export function checkPromptDefinition(
  definition: Pick<
    PromptDefinition,
    | "messages"
    | "inputs"
    | "output"
    | "providerOptions"
    | "tools"
    | "toolChoice"
    | "maxSteps"
    | "toolTimeoutSeconds"
    | "retrieval"
  >,
  providers: ProviderConfig,
): void {
  checkMessageTemplates(definition);
  checkRetrieval(definition);
  checkOutputSchema(definition.output);
  checkProviderOptions(definition.providerOptions, providers);
  checkToolDefinitions(definition);
}
