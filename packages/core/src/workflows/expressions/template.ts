/**
 * Workflow templates (docs/WORKFLOWS.md "Templates"): text with `{{expression}}` parts, each a CEL
 * expression over `inputs` and `steps` (./expression.ts). A string that is one whole
 * `{{expression}}` yields the expression's value with its type (a number stays a number, an
 * object an object); anywhere else a value is written as text: strings as they are, null as
 * nothing, other values as JSON.
 */
import { invalid, PromptrunError } from "../../errors.ts";
import { type CompiledExpression, compileExpression, type ExpressionContext } from "./expression.ts";

const PART = /\{\{([\s\S]*?)\}\}/g;

export interface CompiledTemplate {
  source: string;
  steps: ReadonlySet<string>;
  inputs: ReadonlySet<string>;
  /** The value: the expression's own for a whole `{{…}}`, else the text. */
  value(context: ExpressionContext): unknown;
  /** Always text. */
  render(context: ExpressionContext): string;
}

/** Compiles a template; throws PromptrunError("invalid") naming the part that does not compile. */
export function compileTemplate(source: string): CompiledTemplate {
  const pieces: Array<string | CompiledExpression> = [];
  let last = 0;
  for (const match of source.matchAll(PART)) {
    const start = match.index ?? 0;
    if (start > last) pieces.push(source.slice(last, start));
    const expression = (match[1] ?? "").trim();
    if (expression === "") throw invalid("empty {{ }} in template");
    try {
      pieces.push(compileExpression(expression));
    } catch (error) {
      if (PromptrunError.isInstance(error)) throw invalid(`{{${expression}}}: ${error.message}`);
      throw error;
    }
    last = start + match[0].length;
  }
  if (last < source.length) pieces.push(source.slice(last));
  const expressions = pieces.filter((piece): piece is CompiledExpression => typeof piece !== "string");
  const steps = new Set(expressions.flatMap((expression) => [...expression.steps]));
  const inputs = new Set(expressions.flatMap((expression) => [...expression.inputs]));
  const whole = pieces.length === 1 && typeof pieces[0] !== "string" ? pieces[0] : null;
  const render = (context: ExpressionContext) =>
    pieces.map((piece) => (typeof piece === "string" ? piece : asText(piece.evaluate(context)))).join("");
  return {
    source,
    steps,
    inputs,
    render,
    value: (context) => (whole ? whole.evaluate(context) : render(context)),
  };
}

/** A value written into text. */
export function asText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** A JSON value whose strings are templates (a step's `inputs`). */
export interface CompiledValue {
  steps: ReadonlySet<string>;
  inputs: ReadonlySet<string>;
  value(context: ExpressionContext): unknown;
}

/** Compiles every string inside a JSON value as a template; `path` names the value in errors. */
export function compileValue(value: unknown, path: string): CompiledValue {
  if (typeof value === "string") {
    try {
      return compileTemplate(value);
    } catch (error) {
      if (PromptrunError.isInstance(error)) throw invalid(`${path}: ${error.message}`);
      throw error;
    }
  }
  if (Array.isArray(value)) {
    const items = value.map((item, index) => compileValue(item, `${path}[${index}]`));
    return combine(items, (context) => items.map((item) => item.value(context)));
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(
      ([key, item]) => [key, compileValue(item, `${path}.${key}`)] as const,
    );
    return combine(
      entries.map(([, item]) => item),
      (context) => Object.fromEntries(entries.map(([key, item]) => [key, item.value(context)])),
    );
  }
  return { steps: new Set(), inputs: new Set(), value: () => value };
}

function combine(parts: CompiledValue[], value: (context: ExpressionContext) => unknown): CompiledValue {
  return {
    steps: new Set(parts.flatMap((part) => [...part.steps])),
    inputs: new Set(parts.flatMap((part) => [...part.inputs])),
    value,
  };
}
