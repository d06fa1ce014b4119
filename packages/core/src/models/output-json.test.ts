import { describe, expect, test } from "bun:test";
import { OUTPUT_MISMATCH, outputJsonOf } from "./output-json.ts";

const schema = {
  type: "object",
  properties: { at: { type: "string", format: "date-time" }, n: { type: "integer" } },
  required: ["at"],
  additionalProperties: false,
};
const strict = { format: "json_schema" as const, strict: true, schema };

describe("outputJsonOf", () => {
  test("text prompts and absent output give null", () => {
    expect(outputJsonOf(undefined, '{"a":1}')).toEqual({ ok: true, value: null });
    expect(outputJsonOf({ format: "text" }, '{"a":1}')).toEqual({ ok: true, value: null });
  });

  test("not strict: the parsed value, unchecked; null when it does not parse", () => {
    const loose = { format: "json_schema" as const, schema };
    expect(outputJsonOf(loose, '{"other":true}')).toEqual({ ok: true, value: { other: true } });
    expect(outputJsonOf(loose, "[1, 2]")).toEqual({ ok: true, value: [1, 2] });
    expect(outputJsonOf(loose, "nope")).toEqual({ ok: true, value: null });
  });

  test("strict: the first violation, formats included", () => {
    expect(outputJsonOf(strict, '{"at":"2025-01-01T00:00:00Z","n":2}')).toEqual({
      ok: true,
      value: { at: "2025-01-01T00:00:00Z", n: 2 },
    });
    expect(outputJsonOf(strict, '{"at":"yesterday"}')).toEqual({
      ok: false,
      error: `${OUTPUT_MISMATCH}/at: must match format "date-time"`,
    });
    expect(outputJsonOf(strict, '{"at":"2025-01-01T00:00:00Z","x":1}')).toEqual({
      ok: false,
      error: `${OUTPUT_MISMATCH}/: must NOT have additional properties (x)`,
    });
    expect(outputJsonOf(strict, '{"at":"2025-01-01T00:00:00Z","n":1.5}')).toEqual({
      ok: false,
      error: `${OUTPUT_MISMATCH}/n: must be integer`,
    });
    const broken = outputJsonOf(strict, '{"at":');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error).toStartWith(`${OUTPUT_MISMATCH}not valid JSON (`);
  });
});
