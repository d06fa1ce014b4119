import type { OutputSpec } from "@promptrun/contract";
import { compileJsonSchema, firstViolation } from "../json-schema/compile-json-schema.ts";

/** The prefix of a strict output's failure (docs/PRODUCT-RULES.md, structured output). */
export const OUTPUT_MISMATCH = "output does not match the schema: ";

export type OutputJsonResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * A finished answer read against the prompt's `output`: text prompts give null; a json_schema
 * prompt gives the parsed JSON (null when it does not parse), and with `strict: true` an answer
 * that does not parse or does not match the schema is an error naming the first violation.
 */
export function outputJsonOf(output: OutputSpec | null | undefined, text: string): OutputJsonResult {
  if (output?.format !== "json_schema") return { ok: true, value: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!output.strict) return { ok: true, value: null };
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `${OUTPUT_MISMATCH}not valid JSON (${why})` };
  }
  if (!output.strict) return { ok: true, value };
  // Compiled once per distinct schema (cached): a version's schema compiled at push already.
  const validate = compileJsonSchema(output.schema);
  if (validate(value)) return { ok: true, value };
  return { ok: false, error: OUTPUT_MISMATCH + firstViolation(validate.errors) };
}
