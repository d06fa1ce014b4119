import type {
  ContentPart,
  HistoryMessage,
  InputDeclaration,
  PromptDefinition,
  PromptMessage,
} from "@promptrun/contract";
import { invalid } from "../errors.ts";
import { MEDIA_INPUT_RULE, mediaInputProblem } from "../inputs/media-input.ts";
import { messagesInputProblem } from "../inputs/messages-input.ts";

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

/** The placeholders of one template, in order: `{{name}}` → {env: false, name}, `{{env.NAME}}` → {env: true, name}. */
export function placeholdersOf(template: string): Array<{ env: boolean; name: string }> {
  return [...template.matchAll(PLACEHOLDER)].map((match) => ({
    env: match[1] !== undefined,
    name: match[2]!,
  }));
}

const article = (type: string) =>
  type === "integer" || type === "array" || type === "object" || type === "image" ? "an" : "a";

/** What is wrong with one input value for its declared type (the whole message), or null. */
function inputProblem(declaration: InputDeclaration, name: string, value: unknown): string | null {
  const type = declaration.type;
  let matches: boolean;
  switch (type) {
    case "string":
      matches = typeof value === "string";
      break;
    case "number":
      matches = typeof value === "number" && Number.isFinite(value);
      break;
    case "integer":
      matches = typeof value === "number" && Number.isInteger(value);
      break;
    case "boolean":
      matches = typeof value === "boolean";
      break;
    case "array":
      matches = Array.isArray(value);
      break;
    case "object":
      matches = typeof value === "object" && value !== null && !Array.isArray(value);
      break;
    case "image":
    case "file": {
      if (typeof value !== "string") return `inputs.${name} ${MEDIA_INPUT_RULE}`;
      const problem = mediaInputProblem(value, type);
      return problem === null ? null : `inputs.${name} ${problem}`;
    }
    case "messages":
      return messagesInputProblem(name, value);
  }
  return matches ? null : `inputs.${name} must be ${article(type)} ${type}`;
}

/**
 * Create-time check of the run's inputs against the version's declarations, without I/O (the
 * media checks that need it are in inputs/media-input.ts, checkMediaInput). Returns the inputs
 * with defaults applied. Messages name the input (`inputs.name`, `inputs.history[3].role`).
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
    const problem = inputProblem(declaration, name, value);
    if (problem !== null) throw invalid(problem);
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

/** The input a template names when it is exactly `{{name}}` (surrounding whitespace allowed), else null. */
export function wholePlaceholderName(template: string): string | null {
  return WHOLE_PLACEHOLDER.exec(template.trim())?.[1] ?? null;
}

/** The `messages` input a message stands for, if it is exactly `{{name}}` of such an input. */
export function messagesInputOf(
  message: PromptMessage,
  declarations: Record<string, InputDeclaration>,
): string | null {
  if (typeof message.content !== "string") return null;
  const name = wholePlaceholderName(message.content);
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
