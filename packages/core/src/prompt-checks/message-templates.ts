import type { ContentPart, InputDeclaration, InputType, PromptDefinition } from "@promptrun/contract";
import { invalid } from "../errors.ts";
import { placeholdersOf, wholePlaceholderName } from "../templating/template.ts";
import { RETRIEVAL_PLACEHOLDER } from "./retrieval.ts";

type Declarations = Record<string, InputDeclaration>;

const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

/** Own keys only: `{{constructor}}` is no declared input just because objects have one. */
const typeOf = (declarations: Declarations, name: string): InputType | undefined =>
  Object.hasOwn(declarations, name) ? (declarations[name]?.type ?? "string") : undefined;

/**
 * A text template (a string content or a text part): it may name declared inputs that render as
 * text, and `env.NAME`. An image, file or messages input has a place of its own.
 */
function checkText(template: string, path: string, declarations: Declarations, retrieval: boolean): void {
  const undeclared: string[] = [];
  for (const { env, name } of placeholdersOf(template)) {
    if (env) continue;
    const type = typeOf(declarations, name);
    if (type === undefined && name === RETRIEVAL_PLACEHOLDER) {
      if (retrieval) continue;
      throw invalid(
        `${path}: {{retrieval}} needs the prompt's retrieval: (e.g. retrieval: {knowledgeBase: docs, query: "{{question}}"}), or an input named retrieval`,
      );
    }
    if (type === undefined) {
      if (!undeclared.includes(name)) undeclared.push(name);
    } else if (type === "image" || type === "file") {
      throw invalid(
        `${path}: ${type} input '${name}' can only fill ${withArticle(type)} part ({type: ${type}, ${type}: "{{${name}}}"}), not text`,
      );
    } else if (type === "messages") {
      throw invalid(
        `${path}: messages input '${name}' can only be the whole content of a user or assistant message ("{{${name}}}")`,
      );
    }
  }
  if (undeclared.length > 0)
    throw invalid(
      `${path}: template names undeclared input${undeclared.length > 1 ? "s" : ""}: ${undeclared.join(", ")}`,
    );
}

/** An image or file part: exactly `{{name}}` of one input of that type. */
function checkMediaSlot(template: string, kind: "image" | "file", path: string, declarations: Declarations) {
  const name = wholePlaceholderName(template);
  if (name === null) throw invalid(`${path}: must be "{{name}}" of one ${kind} input`);
  const type = typeOf(declarations, name);
  if (type === undefined) throw invalid(`${path}: template names undeclared input: ${name}`);
  if (type !== kind)
    throw invalid(
      `${path}: input '${name}' is of type ${type}; ${withArticle(kind)} part needs ${withArticle(kind)} input`,
    );
}

/** `type/subtype`, e.g. image/png, application/pdf; an image part's must be image/*. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

function checkPart(part: ContentPart, path: string, declarations: Declarations, retrieval: boolean): void {
  if (part.type === "text") {
    checkText(part.text, `${path}.text`, declarations, retrieval);
    return;
  }
  const source = part.type === "image" ? part.image : part.file;
  checkMediaSlot(source, part.type, `${path}.${part.type}`, declarations);
  if (part.mediaType === undefined) return;
  if (!MEDIA_TYPE.test(part.mediaType) || (part.type === "image" && !/^image\//i.test(part.mediaType)))
    throw invalid(
      `${path}.mediaType: '${part.mediaType}' is not ${part.type === "image" ? "an image/* media type" : "a media type (type/subtype)"}`,
    );
}

/**
 * Push-time rules for templates (docs/PRODUCT-RULES.md "Prompts and versions"): a template names
 * only declared inputs and `env.NAME`; an image / file part names exactly one `image` / `file`
 * input; such inputs never appear in text; a `messages` input appears only as the whole content
 * (`{{name}}`) of a user or assistant message; `{{retrieval}}` (text) needs the prompt's
 * `retrieval:`. Errors name the field by its path.
 */
export function checkMessageTemplates(
  definition: Pick<PromptDefinition, "messages" | "inputs"> & Partial<Pick<PromptDefinition, "retrieval">>,
): void {
  const declarations = definition.inputs;
  const retrieval = definition.retrieval !== undefined;
  for (const [index, message] of definition.messages.entries()) {
    const path = `messages[${index}]`;
    if (typeof message.content !== "string") {
      for (const [partIndex, part] of message.content.entries())
        checkPart(part, `${path}.content[${partIndex}]`, declarations, retrieval);
      continue;
    }
    const whole = wholePlaceholderName(message.content);
    if (whole !== null && typeOf(declarations, whole) === "messages") {
      if (message.role === "system")
        throw invalid(
          `${path}.role: messages input '${whole}' can only stand for user or assistant messages, not system`,
        );
      continue;
    }
    checkText(message.content, `${path}.content`, declarations, retrieval);
  }
}
