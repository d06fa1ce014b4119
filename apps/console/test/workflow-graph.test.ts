/** The console's display-only reading of a workflow's dependencies, and the layered layout of them. */
import { describe, expect, test } from "bun:test";
import type { WorkflowStep } from "@promptrun/contract";
import { dependencyEdges, layoutGraph, NODE_WIDTH, stepNamesIn } from "../src/screens/workflow-graph.ts";

const triage: WorkflowStep[] = [
  { id: "classify", prompt: "classify@production", inputs: { text: "{{inputs.ticket}}" } },
  { id: "docs", retrieve: { knowledgeBase: "help", query: "{{inputs.ticket}}", topK: 5 } },
  {
    id: "answer",
    prompt: "answer@production",
    when: "steps.classify.outputJson.category != 'spam'",
    inputs: {
      ticket: "{{inputs.ticket}}",
      context: "{{steps.docs.text}}",
      nested: { list: ["{{ steps['classify'].output }}"] },
    },
  },
  {
    id: "sum-up",
    retrieve: { knowledgeBase: "help", query: '{{steps.answer.output}} and {{steps["docs"].text}}' },
  },
];

describe("dependencies read from a workflow version", () => {
  test("dot and index references in when, nested inputs and a query give one edge per pair, in file order", () => {
    expect(dependencyEdges(triage)).toEqual([
      { from: "classify", to: "answer" },
      { from: "docs", to: "answer" },
      { from: "docs", to: "sum-up" },
      { from: "answer", to: "sum-up" },
    ]);
  });

  test("only template parts count in inputs; unknown steps and the step itself are ignored", () => {
    const steps: WorkflowStep[] = [
      { id: "a", prompt: "p", inputs: { text: "plain steps.b text, {{steps.ghost.output}}" } },
      { id: "b", prompt: "p", when: "steps.b.status == 'x' || steps.a.status == 'completed'" },
    ];
    expect(dependencyEdges(steps)).toEqual([{ from: "a", to: "b" }]);
  });

  test("a hyphenated id is read only in index form (steps.my-step is a subtraction)", () => {
    expect(stepNamesIn("steps.my-step.output")).toEqual(["my"]);
    expect(stepNamesIn("steps[ 'my-step' ].output + steps.x_1.text")).toEqual(["x_1", "my-step"]);
  });
});

describe("layout", () => {
  test("each step lies right of the steps it needs; independent steps share a layer", () => {
    const ids = triage.map((step) => step.id);
    const placed = layoutGraph(ids, dependencyEdges(triage));
    const x = Object.fromEntries(placed.nodes.map((node) => [node.id, node.x]));
    expect(x.classify).toBe(x.docs as number);
    expect(x.answer as number).toBeGreaterThanOrEqual((x.classify as number) + NODE_WIDTH);
    expect(x["sum-up"] as number).toBeGreaterThanOrEqual((x.answer as number) + NODE_WIDTH);
    expect(placed.width).toBeGreaterThanOrEqual(3 * NODE_WIDTH);
    for (const edge of placed.edges) expect(edge.points.length).toBeGreaterThanOrEqual(2);
  });

  test("an edge naming an unknown step is dropped, not drawn", () => {
    const placed = layoutGraph(["a"], [{ from: "ghost", to: "a" }]);
    expect(placed.edges).toEqual([]);
    expect(placed.nodes).toHaveLength(1);
  });
});
