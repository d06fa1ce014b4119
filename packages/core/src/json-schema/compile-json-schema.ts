/**
 * JSON Schema (draft 2020-12) for prompt files: compiled once per distinct schema, at push to
 * refuse a schema that does not compile, and at run time to check structured output
 * (docs/PRODUCT-RULES.md "Prompts and versions").
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { invalid } from "../errors.ts";
import { canonicalJson } from "../services/canonical-json.ts";

export type JsonSchemaValidator = ValidateFunction;

/** Distinct schemas kept compiled; the least recently used is dropped past this. */
const CACHE_ENTRIES = 256;
/**
 * A fresh Ajv per schema: one long-lived instance keeps every schema it ever compiled (its own
 * cache is unbounded) and refuses a second schema reusing an `$id`. Creating one costs ~0.4 ms;
 * compiling ~2 ms, which the bounded cache above saves.
 */
const newAjv = () => {
  // Strict mode (Ajv's default) refuses unknown keywords and formats, so a typo such as
  // `requried` fails the push instead of being silently ignored; warnings are not logged.
  const ajv = new Ajv2020({ logger: false });
  addFormats(ajv);
  return ajv;
};

/** `<instancePath or "/">: <message>` of the first error, e.g. `/reply: must be string`. */
export function firstViolation(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return "/: does not match the schema";
  return `${first.instancePath || "/"}: ${first.message ?? first.keyword}${detailOf(first)}`;
}

/** What ajv keeps in `params` but not in the message: the extra property, the allowed values. */
function detailOf(error: ErrorObject): string {
  const params = error.params as { additionalProperty?: unknown; allowedValues?: unknown };
  if (error.keyword === "additionalProperties") return ` (${String(params.additionalProperty)})`;
  if (error.keyword === "enum") return ` (${JSON.stringify(params.allowedValues)})`;
  return "";
}

function compileFresh(schema: Record<string, unknown>): JsonSchemaValidator {
  const ajv = newAjv();
  let violation: string;
  try {
    // Against the draft's meta-schema first: its first error names where the schema is wrong.
    if (ajv.validateSchema(schema) === true) return ajv.compile(schema);
    violation = firstViolation(ajv.errors);
  } catch (error) {
    // Strict mode, an unresolvable `$ref`, a `pattern` that is no regular expression, too deep.
    const message = error instanceof RangeError ? "nested too deep" : (error as Error).message;
    throw invalid(`does not compile as JSON Schema (draft 2020-12): ${message}`);
  }
  throw invalid(`not a valid JSON Schema (draft 2020-12) at ${violation}`);
}

/**
 * A compiler that keeps up to `entries` validators, keyed by the schema's canonical JSON (key
 * order does not matter), dropping the least recently used. The module's own one serves
 * compileJsonSchema; tests make small ones.
 */
export function createJsonSchemaCompiler(entries: number) {
  const cache = new Map<string, JsonSchemaValidator>();
  return (schema: Record<string, unknown>): JsonSchemaValidator => {
    let key: string;
    try {
      key = canonicalJson(schema);
    } catch {
      throw invalid("does not compile as JSON Schema (draft 2020-12): nested too deep");
    }
    const cached = cache.get(key);
    if (cached) {
      cache.delete(key);
      cache.set(key, cached);
      return cached;
    }
    const validator = compileFresh(schema);
    cache.set(key, validator);
    if (cache.size > entries) cache.delete(cache.keys().next().value as string);
    return validator;
  };
}

/**
 * The validator of `schema`, compiled once per distinct schema (bounded cache). Throws
 * PromptrunError `invalid` whose message says why the schema does not compile; the caller puts
 * the field's path in front (`output.schema: …`).
 */
export const compileJsonSchema: (schema: Record<string, unknown>) => JsonSchemaValidator =
  createJsonSchemaCompiler(CACHE_ENTRIES);

/** The first violation of `value` against `schema` (see firstViolation), or null when it matches. */
export function jsonSchemaViolation(schema: Record<string, unknown>, value: unknown): string | null {
  const validate = compileJsonSchema(schema);
  return validate(value) ? null : firstViolation(validate.errors);
}
