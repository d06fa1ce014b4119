import { describe, expect, test } from "bun:test";
import { createRunRequestSchema } from "@promptrun/contract";
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
