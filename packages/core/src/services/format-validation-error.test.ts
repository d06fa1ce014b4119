import { describe, expect, test } from "bun:test";
import { createRunRequestSchema, promptFileSchema } from "@promptrun/contract";
import { formatValidationError } from "./format-validation-error.ts";

const messageFor = (body: unknown): string => {
  const result = createRunRequestSchema.safeParse(body);
  if (result.success) throw new Error("expected a validation error");
  return formatValidationError(result.error);
};

describe("formatValidationError", () => {
  test("names the field of each problem", () => {
    expect(messageFor({})).toBe("inputs: required");
    expect(messageFor([])).toBe("request body must be a JSON object");
    expect(messageFor({ inputs: {}, foo: 1 })).toBe("unknown field 'foo'");
    expect(messageFor({ inputs: {}, foo: 1, bar: 2 })).toBe("unknown fields 'foo', 'bar'");
    expect(messageFor({ inputs: {}, envVars: { lower: "x" } })).toBe(
      "envVars: envVars key 'lower' must be UPPER_CASE (^[A-Z][A-Z0-9_]*$)",
    );
    expect(messageFor({ inputs: {}, envVars: { A: 1 } })).toBe("envVars.A: envVars values must be strings");
    expect(messageFor({ inputs: {}, thread: "nope" })).toBe("thread: must be a UUID");
    expect(messageFor({ inputs: {}, priority: "high" })).toBe(
      'priority: expected one of "onsite"|"normal"|"low"',
    );
  });

  test("explains union failures by their most specific branch", () => {
    expect(messageFor({ inputs: {}, metadata: { a: 1 } })).toBe("metadata.a: expected string or array");
    expect(messageFor({ inputs: {}, metadata: { a: ["x", 2] } })).toBe(
      "metadata.a[1]: expected string, received number",
    );
  });
});

describe("formatValidationError on prompt files: nested paths", () => {
  const base = { slug: "s", model: "dev:echo", messages: [{ role: "user", content: "hi" }] };
  const fileMessage = (fields: Record<string, unknown>): string => {
    const result = promptFileSchema.safeParse({ ...base, ...fields });
    if (result.success) throw new Error("expected a validation error");
    return formatValidationError(result.error, "prompt file");
  };
  const twoMessages = (content: unknown) => ({
    messages: [
      { role: "user", content: "x" },
      { role: "user", content },
    ],
  });

  test("params.reasoning", () => {
    expect(fileMessage({ params: { reasoning: { effort: "extreme" } } })).toBe(
      'params.reasoning.effort: expected one of "minimal"|"low"|"medium"|"high"',
    );
    expect(fileMessage({ params: { reasoning: { effort: "low", extra: 1 } } })).toBe(
      "unknown field 'params.reasoning.extra'",
    );
    expect(fileMessage({ params: { reasoning: {} } })).toBe(
      "params.reasoning: give effort (minimal | low | medium | high) or budgetTokens",
    );
  });

  test("message parts: an unknown part type names the discriminator and its options", () => {
    expect(fileMessage(twoMessages([{ type: "video", video: "x" }]))).toBe(
      'messages[1].content[0].type: expected one of "text"|"image"|"file"',
    );
    expect(fileMessage(twoMessages([{ type: "image", image: "{{a}}", foo: 1 }]))).toBe(
      "unknown field 'messages[1].content[0].foo'",
    );
    expect(fileMessage(twoMessages([{ type: "text" }]))).toBe("messages[1].content[0].text: required");
    expect(fileMessage(twoMessages(5))).toBe("messages[1].content: expected string or array");
  });

  test("output, memory, providerOptions, input types", () => {
    expect(fileMessage({ output: { format: "xml" } })).toBe(
      'output.format: expected one of "text"|"json_schema"',
    );
    expect(fileMessage({ output: { format: "json_schema" } })).toBe("output.schema: required");
    expect(fileMessage({ output: { format: "text", schema: {} } })).toBe("unknown field 'output.schema'");
    expect(fileMessage({ memory: { maxMessages: -1 } })).toBe(
      "memory.maxMessages: Too small: expected number to be >=0",
    );
    expect(fileMessage({ providerOptions: { "bad key": {} } })).toBe(
      "providerOptions.bad key: provider names are identifiers",
    );
    expect(fileMessage({ providerOptions: { openai: 5 } })).toBe(
      "providerOptions.openai: expected record, received number",
    );
    expect(fileMessage({ inputs: { s: { type: "video" } } })).toContain(
      'inputs.s.type: expected one of "string"|"number"',
    );
  });
});
