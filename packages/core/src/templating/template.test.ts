import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import { assertTemplatesDeclared, renderMessages, templateVariables, validateInputs } from "./template.ts";

describe("templates", () => {
  const messages = [
    { role: "system" as const, content: "Be {{ tone }}. Key: {{env.API_TOKEN}}" },
    { role: "user" as const, content: "Hi {{name}}, {{name}}!" },
  ];
  test("finds input and env variables", () => {
    expect(templateVariables(messages)).toEqual({ inputs: ["tone", "name"], env: ["API_TOKEN"] });
  });
  test("rejects undeclared inputs at push", () => {
    expect(() =>
      assertTemplatesDeclared({
        model: "dev:echo",
        params: {},
        inputs: { name: { type: "string" } },
        messages,
      }),
    ).toThrow("undeclared input: tone");
  });
  test("renders inputs and env", () => {
    expect(renderMessages({ messages }, { tone: "kind", name: "Ada" }, { API_TOKEN: "t" })).toEqual([
      { role: "system", content: "Be kind. Key: t" },
      { role: "user", content: "Hi Ada, Ada!" },
    ]);
  });
});

describe("validateInputs", () => {
  const declarations = {
    name: { type: "string" as const },
    tone: { type: "string" as const, default: "friendly" },
    count: { type: "integer" as const, optional: true },
  };
  test("applies defaults", () => {
    expect(validateInputs(declarations, { name: "Ada" })).toEqual({ name: "Ada", tone: "friendly" });
  });
  test("names the missing, unknown and mistyped input", () => {
    const message = (inputs: Record<string, unknown>) => {
      try {
        validateInputs(declarations, inputs);
        return "no error";
      } catch (error) {
        return PromptrunError.isInstance(error) ? `${error.code}: ${error.message}` : "other";
      }
    };
    expect(message({})).toBe("invalid: missing required input: inputs.name");
    expect(message({ name: "a", nope: 1 })).toBe("invalid: unknown input: inputs.nope");
    expect(message({ name: 5 })).toBe("invalid: inputs.name must be a string");
    expect(message({ name: "a", count: 1.5 })).toBe("invalid: inputs.count must be an integer");
  });
});
