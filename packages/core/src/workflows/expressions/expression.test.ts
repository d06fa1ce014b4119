import { describe, expect, test } from "bun:test";
import { compileExpression } from "./expression.ts";
import { compileTemplate, compileValue } from "./template.ts";

const context = {
  inputs: { ticket: "my order is late", n: 2, price: 1.5, tags: ["a", "b"] },
  steps: {
    classify: { output: "{}", outputJson: { category: "shipping", score: 3 } },
    docs: { text: "[1] a.md: x" },
  },
};

describe("workflow expressions", () => {
  test("a when over step outputs and inputs evaluates to a boolean", () => {
    const when = compileExpression("steps.classify.outputJson.category != 'spam' && inputs.n + 1 == 3");
    expect(when.evaluate(context)).toBe(true);
    expect([...when.steps]).toEqual(["classify"]);
    expect([...when.inputs]).toEqual(["n"]);
  });

  test("steps named with an index literal count as references", () => {
    expect([...compileExpression("steps['docs'].text != ''").steps]).toEqual(["docs"]);
  });

  test.each([
    ["globals", "process.exit(1)"],
    ["this", "this.constructor"],
    ["unknown variable", "env.SECRET == 'x'"],
    ["regular expressions", "inputs.ticket.matches('(a+)+$')"],
    ["nested comprehensions", "inputs.tags.all(x, inputs.tags.exists(y, x == y))"],
    ["dynamic step names", "steps[inputs.ticket].output == ''"],
    ["syntax", "inputs.ticket =="],
  ])("refuses %s at compile time", (_, source) => {
    expect(() => compileExpression(source)).toThrow();
  });

  test("an expression longer than the limit is refused", () => {
    expect(() => compileExpression(`inputs.n == ${"1 + ".repeat(400)}1`)).toThrow(/at most/);
  });

  test("an AST over the node cap is refused however short each part is", () => {
    const wide = Array.from({ length: 240 }, () => "1").join("+");
    expect(() => compileExpression(wide)).toThrow(/does not compile/);
  });

  test("a missing key fails evaluation with a clear message", () => {
    expect(() => compileExpression("steps.classify.outputJson.missing == 1").evaluate(context)).toThrow(
      /missing/,
    );
  });

  test("a whole-template value keeps its type; mixed text renders null as nothing", () => {
    expect(compileTemplate("{{steps.classify.outputJson}}").value(context)).toEqual({
      category: "shipping",
      score: 3,
    });
    expect(compileTemplate("{{ inputs.n }}").value(context)).toBe(2);
    expect(compileTemplate("Ticket: {{inputs.ticket}} ({{inputs.price}})").render(context)).toBe(
      "Ticket: my order is late (1.5)",
    );
    expect(
      compileTemplate("[{{steps.x.output}}]").render({ inputs: {}, steps: { x: { output: null } } }),
    ).toBe("[]");
  });

  test("a step's inputs compile as a JSON value whose strings are templates", () => {
    const compiled = compileValue(
      { text: "{{inputs.ticket}}", nested: ["{{steps.docs.text}}", 3] },
      "inputs",
    );
    expect([...compiled.steps]).toEqual(["docs"]);
    expect(compiled.value(context)).toEqual({ text: "my order is late", nested: ["[1] a.md: x", 3] });
    expect(() => compileValue({ text: "{{ nope( }}" }, "steps[0].inputs")).toThrow(/steps\[0\].inputs.text/);
  });
});
