/**
 * The graph of a workflow run as the console draws it (docs/console.md "Workflow runs"): one node
 * per step, one edge per dependency, laid out in layers by dagre.
 *
 * The edges are for display only. They are derived in the browser from the workflow version's
 * steps by scanning the `{{…}}` parts of each step's inputs and query, and its whole `when`, for
 * `steps.<id>` and `steps['<id>']`. The server decides the real order from the compiled
 * expressions (core `workflows/graph.ts`); a name that is not a step of the workflow, or the step
 * itself, is ignored here.
 */
import { Graph, layout } from "@dagrejs/dagre";
import type { WorkflowStep } from "@promptrun/contract";

export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 64;

/** `steps.classify` (identifier characters only: `steps.a-b` is a subtraction in CEL). */
const DOT_REFERENCE = /\bsteps\s*\.\s*([a-z][a-z0-9_]*)/g;
/** `steps['my-step']` or `steps["my-step"]`. */
const INDEX_REFERENCE = /\bsteps\s*\[\s*(['"])([a-z][a-z0-9_-]*)\1\s*\]/g;
/** The expression parts of a template. */
const TEMPLATE_PART = /\{\{([\s\S]*?)\}\}/g;

/** The step ids an expression text names. */
export function stepNamesIn(expression: string): string[] {
  const names: string[] = [];
  for (const match of expression.matchAll(DOT_REFERENCE)) names.push(match[1] as string);
  for (const match of expression.matchAll(INDEX_REFERENCE)) names.push(match[2] as string);
  return names;
}

/** The expressions of a template string: the insides of its `{{…}}`. */
const templateExpressions = (template: string): string[] =>
  [...template.matchAll(TEMPLATE_PART)].map((match) => match[1] as string);

/** Every string inside a JSON value (inputs may nest objects and arrays of templates). */
function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, into);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) stringsIn(item, into);
  return into;
}

/** The expressions a step is evaluated with: its `when`, and the templates of its inputs or query. */
function expressionsOf(step: WorkflowStep): string[] {
  const templates = [...stringsIn(step.inputs ?? {}), ...(step.retrieve ? [step.retrieve.query] : [])];
  return [...(step.when ? [step.when] : []), ...templates.flatMap(templateExpressions)];
}

export interface GraphEdge {
  from: string;
  to: string;
}

/** The dependencies of each step (`from` must finish before `to`), in file order, without duplicates. */
export function dependencyEdges(steps: readonly WorkflowStep[]): GraphEdge[] {
  const ids = new Set(steps.map((step) => step.id));
  const edges: GraphEdge[] = [];
  for (const step of steps) {
    const named = new Set(expressionsOf(step).flatMap(stepNamesIn));
    for (const id of ids) if (id !== step.id && named.has(id)) edges.push({ from: id, to: step.id });
  }
  return edges;
}

export interface PlacedNode {
  id: string;
  /** Centre of the node. */
  x: number;
  y: number;
}
export interface PlacedEdge extends GraphEdge {
  points: { x: number; y: number }[];
}
export interface GraphLayout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}

/**
 * Layers left to right (a step right of everything it needs), nodes in file order where dagre has
 * no reason to move them. An edge whose ends are unknown is dropped.
 */
export function layoutGraph(stepIds: readonly string[], edges: readonly GraphEdge[]): GraphLayout {
  const graph = new Graph();
  graph.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 56, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const id of stepIds) graph.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  const known = new Set(stepIds);
  const kept = edges.filter((edge) => known.has(edge.from) && known.has(edge.to));
  for (const edge of kept) graph.setEdge(edge.from, edge.to);
  layout(graph);
  const size = graph.graph();
  return {
    width: Math.ceil(size.width ?? NODE_WIDTH),
    height: Math.ceil(size.height ?? NODE_HEIGHT),
    nodes: stepIds.map((id) => {
      const node = graph.node(id);
      return { id, x: node.x ?? 0, y: node.y ?? 0 };
    }),
    edges: kept.map((edge) => ({ ...edge, points: graph.edge(edge.from, edge.to)?.points ?? [] })),
  };
}
