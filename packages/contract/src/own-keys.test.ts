import { expect, test } from "bun:test";
import { createRunRequestSchema, envVarsSetInputSchema, promptFileSchema } from "./index.ts";

/** Parsed from text: a JS literal with `__proto__` would set a prototype instead of a key. */
const issuePaths = (
  schema: { safeParse(value: unknown): { error?: { issues: { path: PropertyKey[] }[] } } },
  json: string,
) => (schema.safeParse(JSON.parse(json)).error?.issues ?? []).map((issue) => issue.path.join("."));

test("a __proto__ key in a map is an issue naming it, never silently dropped", () => {
  expect(issuePaths(createRunRequestSchema, '{"inputs":{"a":"b","__proto__":"x"}}')).toEqual([
    "inputs.__proto__",
  ]);
  expect(
    issuePaths(createRunRequestSchema, '{"inputs":{},"metadata":{"__proto__":{"isAdmin":"true"}}}'),
  ).toEqual(["metadata.__proto__"]);
  expect(issuePaths(createRunRequestSchema, '{"inputs":{},"envVars":{"__proto__":"x"}}')).toEqual([
    "envVars.__proto__",
  ]);
  expect(
    issuePaths(envVarsSetInputSchema, '{"environment":"production","values":{"__proto__":"x"}}'),
  ).toEqual(["values.__proto__"]);
  const prompt = '"slug":"p","model":"dev:echo","messages":[{"role":"user","content":"hi"}]';
  expect(issuePaths(promptFileSchema, `{${prompt},"inputs":{"__proto__":{"type":"string"}}}`)).toEqual([
    "inputs.__proto__",
  ]);
  expect(issuePaths(promptFileSchema, `{${prompt},"params":{"__proto__":{"delayMs":1}}}`)).toEqual([
    "params.__proto__",
  ]);
});

test("other keys read as before", () => {
  const parsed = createRunRequestSchema.parse(
    JSON.parse('{"inputs":{"constructor":"c","a":{"__proto__":1}},"metadata":{"toString":"t"}}'),
  );
  expect(Object.keys(parsed.inputs)).toEqual(["constructor", "a"]);
  expect(JSON.stringify(parsed.inputs.a)).toBe('{"__proto__":1}');
  expect(parsed.metadata).toEqual({ toString: "t" });
});
