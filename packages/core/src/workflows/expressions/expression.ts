/**
 * The expression language of workflows (docs/WORKFLOWS.md "Expressions"): CEL, by
 * @marcbachmann/cel-js — parsed and type-checked, never `eval`. The only variables are `inputs`
 * and `steps`; steps are named literally (`steps.classify`, `steps['classify']`) so that the
 * graph's edges are known at push. Cost is bounded by construction: CEL has no loops, the AST is
 * capped, comprehensions (`map`, `all`, `exists`, …) may not nest, and regular expressions
 * (`matches`, the one construct whose cost is not linear in its input) are refused.
 */
import { type ASTNode, Environment } from "@marcbachmann/cel-js";
import { WORKFLOW_EXPRESSION_MAX_CHARS } from "@promptrun/contract";
import { invalid } from "../../errors.ts";

const environment = new Environment({
  unlistedVariablesAreDyn: false,
  homogeneousAggregateLiterals: false,
  limits: { maxAstNodes: 400, maxDepth: 32, maxListElements: 100, maxMapEntries: 100, maxCallArguments: 8 },
})
  .registerVariable("inputs", "map")
  .registerVariable("steps", "map");

const COMPREHENSIONS = new Set(["all", "exists", "exists_one", "map", "filter"]);
const REFUSED_FUNCTIONS = new Set(["matches"]);

/** What an expression is evaluated against. */
export interface ExpressionContext {
  inputs: Record<string, unknown>;
  /** Step id → what the step exposes (output, outputJson, text, status). */
  steps: Record<string, unknown>;
}

export interface CompiledExpression {
  source: string;
  /** The step ids the expression names. */
  steps: ReadonlySet<string>;
  /** The input names it reads as `inputs.<name>` / `inputs['<name>']` (dynamic reads are not listed). */
  inputs: ReadonlySet<string>;
  /** Evaluates; throws PromptrunError("invalid") with CEL's message when evaluation fails. */
  evaluate(context: ExpressionContext): unknown;
}

/** Compiles a CEL expression, or throws PromptrunError("invalid") saying what is wrong. */
export function compileExpression(source: string): CompiledExpression {
  if (source.length > WORKFLOW_EXPRESSION_MAX_CHARS) {
    throw invalid(`expression is ${source.length} characters; at most ${WORKFLOW_EXPRESSION_MAX_CHARS}`);
  }
  let parsed: ReturnType<typeof environment.parse>;
  try {
    parsed = environment.parse(source);
  } catch (error) {
    throw invalid(`expression does not compile: ${firstLine(error)}`);
  }
  const checked = parsed.check();
  if (!checked.valid) throw invalid(`expression does not compile: ${firstLine(checked.error)}`);
  const steps = new Set<string>();
  const inputs = new Set<string>();
  walk(parsed.ast, null, 0, { steps, inputs });
  return {
    source,
    steps,
    inputs,
    evaluate(context) {
      try {
        return fromCel(parsed(toCelContext(context)));
      } catch (error) {
        throw invalid(`expression '${source}' failed: ${firstLine(error)}`);
      }
    },
  };
}

interface Found {
  steps: Set<string>;
  inputs: Set<string>;
}

/** Checks the AST's shape and collects its references; `comprehensions` counts enclosing ones. */
function walk(node: ASTNode, parent: ASTNode | null, comprehensions: number, found: Found): void {
  const { op } = node;
  if (op === "id") {
    const name = node.args as unknown as string;
    if (name === "steps" || name === "inputs") recordReference(name, parent, node, found);
    return;
  }
  if (op === "rcall" || op === "call") {
    const name = (node.args as unknown as [string])[0];
    if (REFUSED_FUNCTIONS.has(name))
      throw invalid(`expression may not use ${name}() (regular expressions are not allowed)`);
    if (op === "rcall" && COMPREHENSIONS.has(name)) {
      if (comprehensions > 0) throw invalid(`expression may not nest ${name}() inside another comprehension`);
      comprehensions += 1;
    }
  }
  for (const child of childNodes(node)) walk(child, node, comprehensions, found);
}

function recordReference(
  name: "steps" | "inputs",
  parent: ASTNode | null,
  node: ASTNode,
  found: Found,
): void {
  const key = literalMember(parent, node);
  if (name === "steps") {
    if (key === null) throw invalid("steps must be named literally (steps.<id> or steps['<id>'])");
    found.steps.add(key);
  } else if (key !== null) {
    found.inputs.add(key);
  }
}

/** `x.key` or `x['key']` where `node` is x: the key; null otherwise. */
function literalMember(parent: ASTNode | null, node: ASTNode): string | null {
  if (parent === null) return null;
  const args = parent.args as unknown as unknown[];
  if (args[0] !== node) return null;
  if (parent.op === "." || parent.op === ".?") return typeof args[1] === "string" ? args[1] : null;
  if (parent.op === "[]" || parent.op === "[?]") {
    const index = args[1] as ASTNode;
    return index?.op === "value" && typeof index.args === "string" ? (index.args as string) : null;
  }
  return null;
}

function childNodes(node: ASTNode): ASTNode[] {
  const out: ASTNode[] = [];
  const visit = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value !== null && typeof value === "object" && "op" in value) out.push(value as ASTNode);
  };
  visit(node.args);
  return out;
}

/** JSON integers become CEL ints (so `inputs.n + 1` works); other numbers stay doubles. */
function toCel(value: unknown): unknown {
  if (typeof value === "number")
    return Number.isInteger(value) && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = toCel(item);
    return out;
  }
  return value;
}

function toCelContext(context: ExpressionContext): Record<string, unknown> {
  return { inputs: toCel(context.inputs), steps: toCel(context.steps) };
}

/** CEL values back to JSON values: ints to numbers, maps to plain objects. */
export function fromCel(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value) out[String(key)] = fromCel(item);
    return out;
  }
  if (value !== null && typeof value === "object") {
    if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
    if (value.constructor !== Object) return String(value);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = fromCel(item);
    return out;
  }
  return value;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
