import { describe, expect, test } from "bun:test";
import { type WorkflowDefinition, workflowFileSchema } from "@promptrun/contract";
import { compileWorkflow, parsePromptReference } from "./graph.ts";

const definition = (file: unknown): WorkflowDefinition => {
  const { slug: _slug, tags: _tags, ...rest } = workflowFileSchema.parse(file);
  return rest;
};

const triage = {
  slug: "triage",
  inputs: { ticket: { type: "string" } },
  steps: [
    { id: "classify", prompt: "classify@production", inputs: { text: "{{inputs.ticket}}" } },
    { id: "docs", retrieve: { knowledgeBase: "help", query: "{{inputs.ticket}}", topK: 5 } },
    {
      id: "answer",
      prompt: "answer",
      when: "steps.classify.outputJson.category != 'spam'",
      inputs: { ticket: "{{inputs.ticket}}", context: "{{steps.docs.text}}" },
    },
  ],
  output: "{{steps.answer.output}}",
};

describe("compileWorkflow", () => {
  test("dependencies come from templates and when; the order puts each step after its needs", () => {
    const graph = compileWorkflow(definition(triage));
    expect(graph.byId.get("answer")?.dependsOn).toEqual(["classify", "docs"]);
    expect(graph.order).toEqual(["classify", "docs", "answer"]);
    expect(graph.byId.get("classify")?.prompt).toEqual({
      slug: "classify",
      versionSegment: "production",
      selector: { kind: "tag", tag: "production" },
    });
    expect(graph.byId.get("answer")?.channel).toBe("answer");
  });

  test.each([
    [
      "a cycle",
      [
        { id: "a", prompt: "p", inputs: { x: "{{steps.b.output}}" } },
        { id: "b", prompt: "p", inputs: { x: "{{steps.a.output}}" } },
      ],
      /cycle a → b → a/,
    ],
    ["a self reference", [{ id: "a", prompt: "p", when: "steps.a.output == ''" }], /refers to itself/],
    [
      "an unknown step",
      [{ id: "a", prompt: "p", inputs: { x: "{{steps.nope.output}}" } }],
      /unknown step 'nope'/,
    ],
    [
      "an undeclared input",
      [{ id: "a", prompt: "p", inputs: { x: "{{inputs.other}}" } }],
      /input 'other' is not declared/,
    ],
    [
      "a when that reaches globals",
      [{ id: "a", prompt: "p", when: "process.env.HOME == ''" }],
      /steps\[0\]\.when/,
    ],
    [
      "a duplicate id",
      [
        { id: "a", prompt: "p" },
        { id: "a", prompt: "q" },
      ],
      /duplicate step id/,
    ],
  ])("refuses %s", (_, steps, message) => {
    expect(() => compileWorkflow(definition({ slug: "w", inputs: { ticket: {} }, steps }))).toThrow(message);
  });

  test("a prompt reference without @ means latest", () => {
    expect(parsePromptReference("answer").selector).toEqual({ kind: "latest" });
    expect(parsePromptReference("answer@3").selector).toEqual({ kind: "number", version: 3 });
  });
});
