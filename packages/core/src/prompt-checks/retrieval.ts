import type { InputDeclaration, PromptDefinition } from "@promptrun/contract";
import { invalid } from "../errors.ts";
import { placeholdersOf, templatesOf } from "../templating/template.ts";

/** The placeholder the retrieved chunks fill (docs/KNOWLEDGE.md "In prompts"). */
export const RETRIEVAL_PLACEHOLDER = "retrieval";

/** Whether any message template names `{{retrieval}}`. */
const messagesUseRetrieval = (messages: PromptDefinition["messages"]): boolean =>
  messages.some((message) =>
    templatesOf(message).some((template) =>
      placeholdersOf(template).some(({ env, name }) => !env && name === RETRIEVAL_PLACEHOLDER),
    ),
  );

/** `retrieval.query`: declared text inputs only (no env var reaches a search, nor an image). */
function checkQuery(query: string, declarations: Record<string, InputDeclaration>): void {
  for (const { env, name } of placeholdersOf(query)) {
    if (env)
      throw invalid(
        `retrieval.query: {{env.${name}}} cannot be part of a search query; name declared inputs only`,
      );
    if (!Object.hasOwn(declarations, name))
      throw invalid(`retrieval.query: template names undeclared input: ${name}`);
    const type = declarations[name]?.type ?? "string";
    if (type === "image" || type === "file" || type === "messages")
      throw invalid(`retrieval.query: ${type} input '${name}' cannot be searched for; use a text input`);
  }
}

/**
 * Push-time rules for `retrieval:` (docs/KNOWLEDGE.md "In prompts"): its query names declared
 * inputs only; the prompt declares no input named `retrieval` (that name is the chunks'); its
 * messages use `{{retrieval}}` (else the model never sees what was retrieved). The knowledge
 * base need not exist yet: a run fails clearly when it does not.
 */
export function checkRetrieval(
  definition: Pick<PromptDefinition, "retrieval" | "inputs" | "messages">,
): void {
  const spec = definition.retrieval;
  if (!spec) return;
  if (Object.hasOwn(definition.inputs, RETRIEVAL_PLACEHOLDER))
    throw invalid(
      "inputs.retrieval: with retrieval: set, {{retrieval}} stands for the retrieved chunks; rename this input",
    );
  checkQuery(spec.query, definition.inputs);
  if (!messagesUseRetrieval(definition.messages))
    throw invalid(
      "retrieval: no message uses {{retrieval}}, so the model would never see the retrieved chunks; add {{retrieval}} to a message",
    );
}
