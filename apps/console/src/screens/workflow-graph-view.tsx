import type { WorkflowRunStep, WorkflowStep, WorkflowStepStatus } from "@promptrun/contract";
import { type MouseEvent, useId, useMemo } from "react";
import { useLocation } from "wouter";
import {
  dependencyEdges,
  type GraphEdge,
  layoutGraph,
  NODE_HEIGHT,
  NODE_WIDTH,
  type PlacedEdge,
  type PlacedNode,
} from "./workflow-graph.ts";

/** A mark beside each status word: the status is never told by colour alone. */
export const STEP_STATUS_MARK: Record<WorkflowStepStatus, string> = {
  pending: "○",
  running: "◐",
  completed: "✓",
  failed: "✕",
  skipped: "–",
  cancelled: "⊘",
};

const pathOf = (edge: PlacedEdge): string =>
  edge.points.map((point, index) => `${index === 0 ? "M" : "L"}${point.x},${point.y}`).join(" ");

function dependenciesOf(id: string, edges: readonly GraphEdge[]): string[] {
  return edges.filter((edge) => edge.to === id).map((edge) => edge.from);
}

function NodeBody({ step }: { step: WorkflowRunStep }) {
  const left = -NODE_WIDTH / 2;
  const top = -NODE_HEIGHT / 2;
  return (
    <>
      <rect x={left} y={top} width={NODE_WIDTH} height={NODE_HEIGHT} rx={8} className="graph-node-box" />
      <text x={left + 12} y={top + 22} className="graph-node-id">
        {step.id}
      </text>
      <text x={left + 12} y={top + 44} className="graph-node-status">
        {STEP_STATUS_MARK[step.status]} {step.status} · {step.kind}
      </text>
    </>
  );
}

/** What a node says to a screen reader beyond its text: what it is and what it waits for. */
const descriptionOf = (step: WorkflowRunStep, after: string[]): string =>
  `Step ${step.id}: ${step.kind}, ${step.status}${after.length ? `, after ${after.join(", ")}` : ""}`;

function GraphNode({ node, step, after }: { node: PlacedNode; step: WorkflowRunStep; after: string[] }) {
  const [, navigate] = useLocation();
  const descriptionId = useId();
  const description = descriptionOf(step, after);
  const className = `graph-node graph-node-${step.status}`;
  const transform = `translate(${node.x},${node.y})`;
  if (step.kind === "prompt" && step.runId) {
    const runId = step.runId;
    const open = (event: MouseEvent) => {
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      navigate(`/runs/${runId}`);
    };
    // The link is named by its visible text (id, status, kind); the rest is its description.
    return (
      <a
        href={`/console/runs/${runId}`}
        className={`${className} graph-node-link`}
        aria-describedby={descriptionId}
        data-step-id={step.id}
        data-step-status={step.status}
        onClick={open}
      >
        <desc id={descriptionId}>{`${description}. Opens its run.`}</desc>
        <g transform={transform}>
          <NodeBody step={step} />
        </g>
      </a>
    );
  }
  return (
    // A node without a run to open still takes focus, so a keyboard user can read every step.
    // biome-ignore lint/a11y/noInteractiveElementToNoninteractiveRole: a focusable picture of one step, named by its label.
    <g
      className={className}
      transform={transform}
      role="img"
      aria-label={description}
      tabIndex={0}
      data-step-id={step.id}
      data-step-status={step.status}
    >
      <NodeBody step={step} />
    </g>
  );
}

/**
 * The steps of a workflow run as a graph (SVG): nodes are steps with their status (colour, mark
 * and word), edges their dependencies as read from the workflow version (display only,
 * workflow-graph.ts). A prompt step that has a run links to its run page.
 */
export function WorkflowGraphView({
  runSteps,
  definition,
}: {
  runSteps: WorkflowRunStep[];
  definition: WorkflowStep[] | undefined;
}) {
  const edges = useMemo(() => (definition ? dependencyEdges(definition) : []), [definition]);
  const ids = runSteps.map((step) => step.id);
  const idsKey = ids.join("\n");
  // Laid out again only when the steps change, not on every poll's new array.
  const placed = useMemo(() => layoutGraph(ids, edges), [idsKey, edges]);
  const byId = new Map(runSteps.map((step) => [step.id, step]));
  return (
    // No tabIndex of its own: every node takes focus, and focusing one scrolls it into view.
    <section
      className="graph-scroll"
      aria-label={`Graph of ${ids.length} steps and ${edges.length} dependencies`}
    >
      <svg
        className="workflow-graph"
        width={placed.width}
        height={placed.height}
        viewBox={`0 0 ${placed.width} ${placed.height}`}
      >
        <title>{`Graph of ${ids.length} steps and ${edges.length} dependencies`}</title>
        <defs>
          <marker
            id="graph-arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" className="graph-arrow" />
          </marker>
        </defs>
        {placed.edges.map((edge) => (
          <path
            key={`${edge.from}->${edge.to}`}
            d={pathOf(edge)}
            className="graph-edge"
            markerEnd="url(#graph-arrow)"
            data-edge={`${edge.from}->${edge.to}`}
          />
        ))}
        {placed.nodes.map((node) => {
          const step = byId.get(node.id);
          return step ? (
            <GraphNode key={node.id} node={node} step={step} after={dependenciesOf(node.id, edges)} />
          ) : null;
        })}
      </svg>
    </section>
  );
}
