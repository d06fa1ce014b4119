import type { OutputSpec } from "@promptrun/contract";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/**
 * Output schemas compiled once per distinct schema (draft 2020-12, formats checked) and kept:
 * a prompt version is immutable, so the same few schemas come back run after run.
 * TODO(integration): core/src/json-schema/ (compileJsonSchema + firstViolation) does the same
 * for push-time checks; the two merge into it.
 */
const MAX_CACHED_SCHEMAS = 256;
const compiled = new Map<string, ValidateFunction>();
let ajv: Ajv2020 | undefined;

const validatorOf = (schema: Record<string, unknown>): ValidateFunction => {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    ajv ??= addFormats(new Ajv2020({ strict: false, allErrors: false }));
    if (compiled.size >= MAX_CACHED_SCHEMAS) compiled.clear();
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
};

/** `/path: message` of ajv's first error (`(root)` for the document itself). */
const describe = (error: ErrorObject): string => {
  const where = error.instancePath === "" ? "(root)" : error.instancePath;
  const extra =
    error.keyword === "additionalProperties"
      ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})`
      : error.keyword === "enum"
        ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})`
        : "";
  return `${where}: ${error.message ?? error.keyword}${extra}`;
};

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
  const validate = validatorOf(output.schema);
  if (validate(value)) return { ok: true, value };
  const first = validate.errors?.[0];
  return { ok: false, error: OUTPUT_MISMATCH + (first ? describe(first) : "invalid") };
}
