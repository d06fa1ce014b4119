import type { InputDeclaration, PromptDefinition, PromptMessage } from "@promptrun/contract";
import { invalid } from "../errors.ts";

/** `{{ name }}` or `{{ env.NAME }}`; whitespace inside the braces is allowed. */
const PLACEHOLDER = /\{\{\s*(env\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export interface TemplateVariables {
  inputs: string[];
  env: string[];
}

export function templateVariables(messages: PromptMessage[]): TemplateVariables {
  const inputs = new Set<string>();
  const env = new Set<string>();
  for (const message of messages) {
    for (const match of message.content.matchAll(PLACEHOLDER)) {
      (match[1] ? env : inputs).add(match[2]!);
    }
  }
  return { inputs: [...inputs], env: [...env] };
}

/** Push-time check: every `{{name}}` must be a declared input. */
export function assertTemplatesDeclared(definition: PromptDefinition): void {
  const { inputs } = templateVariables(definition.messages);
  // Own keys only: `constructor` or `toString` are no declared inputs just because objects have them.
  const undeclared = inputs.filter((name) => !Object.hasOwn(definition.inputs, name));
  if (undeclared.length > 0) {
    throw invalid(
      `template names undeclared input${undeclared.length > 1 ? "s" : ""}: ${undeclared.join(", ")}`,
    );
  }
}

const typeMatches = (declaration: InputDeclaration, value: unknown): boolean => {
  switch (declaration.type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
  }
};

/**
 * Create-time check of the run's inputs against the version's declarations. Returns the inputs
 * with defaults applied. Messages name the input (`inputs.name`).
 */
export function validateInputs(
  declarations: Record<string, InputDeclaration>,
  inputs: Record<string, unknown>,
): Record<string, unknown> {
  // Own-property lookups throughout: an input named `constructor`, `toString`, … is an ordinary
  // name, undeclared unless the prompt declares it.
  const unknownNames = Object.keys(inputs).filter((name) => !Object.hasOwn(declarations, name));
  if (unknownNames.length > 0)
    throw invalid(
      `unknown input${unknownNames.length > 1 ? "s" : ""}: ${unknownNames.map((n) => `inputs.${n}`).join(", ")}`,
    );
  const resolved: Record<string, unknown> = {};
  for (const [name, declaration] of Object.entries(declarations)) {
    const value = ownValue(inputs, name);
    if (value === undefined || value === null) {
      if (declaration.default !== undefined) resolved[name] = declaration.default;
      else if (!declaration.optional) throw invalid(`missing required input: inputs.${name}`);
      continue;
    }
    if (!typeMatches(declaration, value))
      throw invalid(
        `inputs.${name} must be ${declaration.type === "integer" || declaration.type === "array" || declaration.type === "object" ? "an" : "a"} ${declaration.type}`,
      );
    resolved[name] = value;
  }
  return resolved;
}

const stringify = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);

/**
 * Own keys only: a name like `constructor` or `__proto__` must never reach Object.prototype
 * (it would render `function Object() …` or let a missing variable pass as present).
 */
function ownValue<T>(record: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * Renders one template. A missing optional input renders as an empty string; a `{{env.NAME}}`
 * that no env var provides fails the run, naming it (a silent empty key or URL is worse).
 */
export function renderTemplate(
  template: string,
  inputs: Record<string, unknown>,
  env: Record<string, string>,
): string {
  return template.replace(PLACEHOLDER, (_match, isEnv: string | undefined, name: string) => {
    if (!isEnv) return stringify(ownValue(inputs, name));
    const value = ownValue(env, name);
    if (value === undefined) throw missingEnvVar(name);
    return value;
  });
}

const missingEnvVar = (name: string) =>
  invalid(
    `env var '${name}' is not set: the prompt uses {{env.${name}}}; set it on the environment or pass it in the run's envVars`,
  );

export function renderMessages(
  definition: Pick<PromptDefinition, "messages">,
  inputs: Record<string, unknown>,
  env: Record<string, string>,
): PromptMessage[] {
  return definition.messages.map((message) => ({
    role: message.role,
    content: renderTemplate(message.content, inputs, env),
  }));
}
