/**
 * A workflow definition compiled into its graph (docs/WORKFLOWS.md "The graph"): every `when`,
 * template and step input compiled once, each step's dependencies (the steps its templates and
 * `when` name), and a topological order. Push refuses what does not compile; the engine advances
 * runs over the same graph.
 */
import type { WorkflowDefinition, WorkflowStep } from "@promptrun/contract";
import { invalid } from "../errors.ts";
import type { VersionSelector } from "../ports.ts";
import { parseVersionSegment } from "../services/parse-version-segment.ts";
import {
  type CompiledExpression,
  type CompiledTemplate,
  type CompiledValue,
  compileExpression,
  compileTemplate,
  compileValue,
} from "./expressions/index.ts";

export interface PromptReference {
  slug: string;
  /** The text after `@` ("latest" when absent). */
  versionSegment: string;
  selector: VersionSelector;
}

export interface CompiledStep {
  id: string;
  /** Position in the file. */
  index: number;
  kind: "prompt" | "retrieve";
  definition: WorkflowStep;
  /** A prompt step's reference. */
  prompt: PromptReference | null;
  /** A prompt step's inputs (strings are templates); null for retrieve steps. */
  inputs: CompiledValue | null;
  /** A retrieve step's query. */
  query: CompiledTemplate | null;
  when: CompiledExpression | null;
  /** The steps this one names (in templates or `when`), in file order. */
  dependsOn: string[];
  continueOnError: boolean;
  /** The channel of a prompt step's run. */
  channel: string;
}

export interface CompiledWorkflow {
  /** In file order. */
  steps: CompiledStep[];
  byId: ReadonlyMap<string, CompiledStep>;
  /** Step ids, each after every step it depends on (file order among equals). */
  order: string[];
  /** The output template; null: the last step's output in file order. */
  output: CompiledTemplate | null;
}

/** `slug`, `slug@3`, `slug@production`, `slug@latest`. */
export function parsePromptReference(reference: string): PromptReference {
  const at = reference.indexOf("@");
  const slug = at === -1 ? reference : reference.slice(0, at);
  const versionSegment = at === -1 ? "latest" : reference.slice(at + 1);
  return { slug, versionSegment, selector: parseVersionSegment(versionSegment) };
}

/**
 * Compiles the definition (already valid against workflowFileSchema). Throws
 * PromptrunError("invalid") naming the path of the first problem: a duplicate step id, an
 * expression or template that does not compile, a step or input that is not declared, a step
 * that names itself, a cycle.
 */
export function compileWorkflow(definition: WorkflowDefinition): CompiledWorkflow {
  const ids = new Set<string>();
  definition.steps.forEach((step, index) => {
    if (ids.has(step.id)) throw invalid(`steps[${index}].id: duplicate step id '${step.id}'`);
    ids.add(step.id);
  });
  const declaredInputs = new Set(Object.keys(definition.inputs));
  const steps = definition.steps.map((step, index) => compileStep(step, index, ids, declaredInputs));
  const byId = new Map(steps.map((step) => [step.id, step]));
  const order = topologicalOrder(steps, byId);
  const output =
    definition.output === undefined
      ? null
      : checkReferences(
          compileAt("output", () => compileTemplate(definition.output ?? "")),
          "output",
          ids,
          declaredInputs,
        );
  return { steps, byId, order, output };
}

function compileStep(
  step: WorkflowStep,
  index: number,
  ids: Set<string>,
  declaredInputs: Set<string>,
): CompiledStep {
  const path = `steps[${index}]`;
  const when =
    step.when === undefined ? null : compileAt(`${path}.when`, () => compileExpression(step.when ?? ""));
  const inputs =
    step.prompt === undefined
      ? null
      : compileAt(`${path}.inputs`, () => compileValue(step.inputs ?? {}, "inputs"));
  const query = step.retrieve
    ? compileAt(`${path}.retrieve.query`, () => compileTemplate(step.retrieve?.query ?? ""))
    : null;
  const dependsOn = new Set<string>();
  for (const [part, where] of [
    [when, "when"],
    [inputs, "inputs"],
    [query, "retrieve.query"],
  ] as const) {
    if (part === null) continue;
    checkReferences(part, `${path}.${where}`, ids, declaredInputs);
    for (const name of part.steps) {
      if (name === step.id) throw invalid(`${path}.${where}: step '${step.id}' refers to itself`);
      dependsOn.add(name);
    }
  }
  return {
    id: step.id,
    index,
    kind: step.prompt === undefined ? "retrieve" : "prompt",
    definition: step,
    prompt: step.prompt === undefined ? null : parsePromptReference(step.prompt),
    inputs,
    query,
    when,
    dependsOn: [...ids].filter((id) => dependsOn.has(id)),
    continueOnError: step.continueOnError === true,
    channel: step.channel ?? step.id,
  };
}

function compileAt<T>(path: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (error instanceof Error && "code" in error) throw invalid(`${path}: ${error.message}`);
    throw error;
  }
}

function checkReferences<T extends { steps: ReadonlySet<string>; inputs: ReadonlySet<string> }>(
  part: T,
  path: string,
  ids: Set<string>,
  declaredInputs: Set<string>,
): T {
  for (const name of part.steps) if (!ids.has(name)) throw invalid(`${path}: unknown step '${name}'`);
  for (const name of part.inputs) {
    if (!declaredInputs.has(name))
      throw invalid(`${path}: input '${name}' is not declared in the workflow's inputs`);
  }
  return part;
}

/** Kahn's algorithm, file order among ready steps; a cycle is named step by step. */
function topologicalOrder(steps: CompiledStep[], byId: ReadonlyMap<string, CompiledStep>): string[] {
  const remaining = new Map(steps.map((step) => [step.id, step.dependsOn.length]));
  const dependents = new Map<string, string[]>(steps.map((step) => [step.id, []]));
  for (const step of steps)
    for (const dependency of step.dependsOn) dependents.get(dependency)?.push(step.id);
  const order: string[] = [];
  const ready = steps.filter((step) => step.dependsOn.length === 0).map((step) => step.id);
  while (ready.length > 0) {
    const id = ready.shift() as string;
    order.push(id);
    for (const dependent of dependents.get(id) ?? []) {
      const left = (remaining.get(dependent) ?? 0) - 1;
      remaining.set(dependent, left);
      if (left === 0) ready.push(dependent);
    }
  }
  if (order.length === steps.length) return order;
  throw invalid(`steps: cycle ${describeCycle(steps, byId, new Set(order))}`);
}

function describeCycle(
  steps: CompiledStep[],
  byId: ReadonlyMap<string, CompiledStep>,
  done: Set<string>,
): string {
  const start = steps.find((step) => !done.has(step.id)) as CompiledStep;
  const path: string[] = [];
  let current: CompiledStep | undefined = start;
  while (current && !path.includes(current.id)) {
    path.push(current.id);
    const next: string | undefined = current.dependsOn.find((id) => !done.has(id));
    current = next === undefined ? undefined : byId.get(next);
  }
  const loopStart = current ? path.indexOf(current.id) : 0;
  const loop = path.slice(loopStart);
  return [...loop, loop[0]].join(" → ");
}
