import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import { checkMessageTemplates } from "../prompt-checks/message-templates.ts";
import { renderMessages, templateVariables, validateInputs } from "./template.ts";

describe("templates", () => {
  const messages = [
    { role: "system" as const, content: "Be {{ tone }}. Key: {{env.API_TOKEN}}" },
    { role: "user" as const, content: "Hi {{name}}, {{name}}!" },
  ];
  test("finds input and env variables", () => {
    expect(templateVariables(messages)).toEqual({ inputs: ["tone", "name"], env: ["API_TOKEN"] });
  });
  test("rejects undeclared inputs at push", () => {
    expect(() => checkMessageTemplates({ inputs: { name: { type: "string" } }, messages })).toThrow(
      "messages[0].content: template names undeclared input: tone",
    );
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

describe("variables are own keys only", () => {
  const errorOf = (render: () => unknown): string => {
    try {
      render();
      return "no error";
    } catch (error) {
      return PromptrunError.isInstance(error) ? `${error.code}: ${error.message}` : "other";
    }
  };

  test("a {{env.NAME}} that no env var provides fails, naming it", () => {
    const messages = [{ role: "user" as const, content: "Key: {{env.API_TOKEN}}" }];
    expect(errorOf(() => renderMessages({ messages }, {}, {}))).toContain("env var 'API_TOKEN' is not set");
    expect(renderMessages({ messages }, {}, { API_TOKEN: "" })[0]!.content).toBe("Key: ");
  });

  test.each(["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"])(
    "env.%s is not read from Object.prototype",
    (name) => {
      const messages = [{ role: "user" as const, content: `{{env.${name}}}` }];
      expect(errorOf(() => renderMessages({ messages }, {}, {}))).toContain(`env var '${name}' is not set`);
      const env = JSON.parse(`{"${name}":"own"}`) as Record<string, string>;
      expect(renderMessages({ messages }, {}, env)[0]!.content).toBe("own");
    },
  );

  test.each(["constructor", "toString", "valueOf", "__proto__"])(
    "input %s is looked up as an own key",
    (name) => {
      const messages = [{ role: "user" as const, content: `[{{${name}}}]` }];
      // Declared-but-optional and absent: renders empty, not a prototype function.
      expect(renderMessages({ messages }, {}, {})[0]!.content).toBe("[]");
      const inputs = JSON.parse(`{"${name}":"own"}`) as Record<string, unknown>;
      expect(renderMessages({ messages }, inputs, {})[0]!.content).toBe("[own]");
      // An undeclared one is caught at push, and not mistaken for a declared one.
      expect(() => checkMessageTemplates({ inputs: {}, messages })).toThrow(`undeclared input: ${name}`);
      // At run creation an input of that name is unknown unless declared, and a declared one is required.
      expect(errorOf(() => validateInputs({}, inputs))).toBe(`invalid: unknown input: inputs.${name}`);
      expect(errorOf(() => validateInputs({ [name]: { type: "string" } }, {}))).toBe(
        `invalid: missing required input: inputs.${name}`,
      );
    },
  );
});
