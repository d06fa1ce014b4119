import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import {
  compileJsonSchema,
  createJsonSchemaCompiler,
  firstViolation,
  jsonSchemaViolation,
} from "./compile-json-schema.ts";

const errorOf = (run: () => unknown): string => {
  try {
    run();
    return "no error";
  } catch (error) {
    return PromptrunError.isInstance(error) ? `${error.code}: ${error.message}` : `other: ${error}`;
  }
};

const answer = {
  type: "object",
  properties: { reply: { type: "string" }, escalate: { type: "boolean" } },
  required: ["reply", "escalate"],
  additionalProperties: false,
};

describe("compileJsonSchema", () => {
  test("a draft 2020-12 schema compiles and validates", () => {
    const validate = compileJsonSchema(answer);
    expect(validate({ reply: "hi", escalate: false })).toBe(true);
    expect(validate({ reply: "hi" })).toBe(false);
    expect(firstViolation(validate.errors)).toBe("/: must have required property 'escalate'");
    expect(validate({ reply: 1, escalate: true })).toBe(false);
    expect(firstViolation(validate.errors)).toBe("/reply: must be string");
  });

  test("2020-12 keywords (prefixItems, $defs) and formats work", () => {
    const schema = {
      $defs: { when: { type: "string", format: "date-time" } },
      type: "array",
      prefixItems: [{ $ref: "#/$defs/when" }, { type: "integer" }],
      items: false,
    };
    expect(jsonSchemaViolation(schema, ["2026-01-01T00:00:00Z", 3])).toBeNull();
    expect(jsonSchemaViolation(schema, ["yesterday", 3])).toBe('/0: must match format "date-time"');
    expect(jsonSchemaViolation(schema, ["2026-01-01T00:00:00Z", 3, 4])).toBe(
      "/: must NOT have more than 2 items",
    );
  });

  test("a schema that does not compile is refused with Ajv's reason", () => {
    expect(errorOf(() => compileJsonSchema({ type: "nonsense" }))).toBe(
      `invalid: not a valid JSON Schema (draft 2020-12) at /type: must be equal to one of the allowed values (["array","boolean","integer","null","number","object","string"])`,
    );
    expect(errorOf(() => compileJsonSchema({ type: "object", requried: ["a"] }))).toBe(
      'invalid: does not compile as JSON Schema (draft 2020-12): strict mode: unknown keyword: "requried"',
    );
    expect(errorOf(() => compileJsonSchema({ $ref: "https://example.com/other.json" }))).toContain(
      "can't resolve reference https://example.com/other.json",
    );
    expect(errorOf(() => compileJsonSchema({ type: "string", pattern: "(" }))).toContain(
      "invalid: does not compile as JSON Schema (draft 2020-12): Invalid regular expression",
    );
    expect(errorOf(() => compileJsonSchema({ type: "string", format: "no-such-format" }))).toContain(
      'unknown format "no-such-format"',
    );
  });

  test("a schema nested past what JSON.stringify can take is refused, not a crash", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 20_000; level++) deep = { type: "array", items: deep };
    expect(errorOf(() => compileJsonSchema(deep))).toBe(
      "invalid: does not compile as JSON Schema (draft 2020-12): nested too deep",
    );
  });

  test("compiled once per distinct schema, whatever its key order", () => {
    const first = compileJsonSchema({ type: "object", properties: { a: { type: "string" } } });
    const reordered = compileJsonSchema({ properties: { a: { type: "string" } }, type: "object" });
    expect(reordered).toBe(first);
    expect(compileJsonSchema({ type: "object", properties: { a: { type: "number" } } })).not.toBe(first);
  });

  test("two schemas with the same $id are independent (no shared Ajv registry)", () => {
    const asString = compileJsonSchema({ $id: "https://example.com/s", type: "string" });
    const asNumber = compileJsonSchema({ $id: "https://example.com/s", type: "number" });
    expect([asString("x"), asString(1), asNumber(1), asNumber("x")]).toEqual([true, false, true, false]);
  });

  test("the cache is bounded: the least recently used schema is compiled again", () => {
    const compile = createJsonSchemaCompiler(3);
    const schema = (minLength: number) => ({ type: "string", minLength });
    const kept = compile(schema(0));
    const evicted = compile(schema(1));
    compile(schema(2));
    compile(schema(0)); // used recently: stays
    compile(schema(3)); // the fourth: drops the least recently used, schema(1)
    expect(compile(schema(0))).toBe(kept);
    expect(compile(schema(1))).not.toBe(evicted);
  });
});
