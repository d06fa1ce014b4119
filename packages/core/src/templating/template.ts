import type {
  ContentPart,
  HistoryMessage,
  InputDeclaration,
  PromptDefinition,
  PromptMessage,
} from "@promptrun/contract";
import { invalid } from "../errors.ts";

/** `{{ name }}` or `{{ env.NAME }}`; whitespace inside the braces is allowed. */
const PLACEHOLDER = /\{\{\s*(env\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export interface TemplateVariables {
  inputs: string[];
  env: string[];
}

/** The template strings of a message: its content, or each part's text / image / file. */
export function templatesOf(message: PromptMessage): string[] {
  if (typeof message.content === "string") return [message.content];
  return message.content.map((part) =>
    part.type === "text" ? part.text : part.type === "image" ? part.image : part.file,
  );
}

export function templateVariables(messages: PromptMessage[]): TemplateVariables {
  const inputs = new Set<string>();
  const env = new Set<string>();
  for (const message of messages) {
    for (const template of templatesOf(message)) {
      for (const match of template.matchAll(PLACEHOLDER)) {
        (match[1] ? env : inputs).add(match[2]!);
      }
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
    case "image":
    case "file":
      return typeof value === "string";
    case "messages":
      return Array.isArray(value);
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

/** `{{name}}` alone: a message that is exactly a `messages` input is replaced by those messages. */
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

/** The `messages` input a message stands for, if it is exactly `{{name}}` of such an input. */
export function messagesInputOf(
  message: PromptMessage,
  declarations: Record<string, InputDeclaration>,
): string | null {
  if (typeof message.content !== "string") return null;
  const name = WHOLE_PLACEHOLDER.exec(message.content.trim())?.[1];
  if (!name || !Object.hasOwn(declarations, name)) return null;
  return declarations[name]?.type === "messages" ? name : null;
}

const renderParts = (
  parts: ContentPart[],
  inputs: Record<string, unknown>,
  env: Record<string, string>,
): ContentPart[] => {
  const rendered: ContentPart[] = [];
  for (const part of parts) {
    if (part.type === "text") {
      rendered.push({ type: "text", text: renderTemplate(part.text, inputs, env) });
      continue;
    }
    const source = renderTemplate(part.type === "image" ? part.image : part.file, inputs, env);
    // A part whose (optional) input is absent is dropped, not sent empty.
    if (source.trim() === "") continue;
    rendered.push(part.type === "image" ? { ...part, image: source } : { ...part, file: source });
  }
  return rendered;
};

/**
 * Renders the prompt's messages for one run: templates filled, parts with an absent input
 * dropped, a message that is exactly a `messages` input replaced by those messages.
 */
export function renderMessages(
  definition: Pick<PromptDefinition, "messages"> & Partial<Pick<PromptDefinition, "inputs">>,
  inputs: Record<string, unknown>,
  env: Record<string, string>,
): PromptMessage[] {
  const declarations = definition.inputs ?? {};
  const rendered: PromptMessage[] = [];
  for (const message of definition.messages) {
    const history = messagesInputOf(message, declarations);
    if (history !== null) {
      const supplied = ownValue(inputs, history);
      if (Array.isArray(supplied)) rendered.push(...(supplied as HistoryMessage[]));
      continue;
    }
    if (typeof message.content === "string") {
      rendered.push({ role: message.role, content: renderTemplate(message.content, inputs, env) });
      continue;
    }
    const parts = renderParts(message.content, inputs, env);
    if (parts.length > 0) rendered.push({ role: message.role, content: parts });
  }
  return rendered;
}
