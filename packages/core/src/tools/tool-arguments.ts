/**
 * Checks a tool call's arguments against the tool's parameters before it runs (docs/TOOLS.md):
 * the model gets the first violation and may try again.
 */
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import {
  compileJsonSchema,
  firstViolation,
  type JsonSchemaValidator,
} from "../json-schema/compile-json-schema.ts";

/** Compiled per schema object: a run asks about the same tool again and again. */
const validators = new WeakMap<object, JsonSchemaValidator | null>();

/**
 * An MCP server's schema is not held to the prompt file's rules (draft 2020-12, strict): servers
 * built with the SDK announce draft-07 and may use keywords Ajv does not know. It compiles
 * leniently; one that still does not compile is left to the server to check.
 */
function compileLenient(schema: Record<string, unknown>): JsonSchemaValidator | null {
  const { $schema: _draft, ...rest } = schema;
  try {
    const ajv = new Ajv2020({ strict: false, validateSchema: false, logger: false });
    addFormats(ajv);
    return ajv.compile(rest);
  } catch {
    return null;
  }
}

/**
 * null when `args` fit `parameters`, else `arguments do not match the parameters of <name>:
 * <path>: <message>`. A prompt's own schemas compiled at push (compileJsonSchema); `lenient`
 * for a schema from an MCP server.
 */
export function argumentsViolation(
  name: string,
  parameters: Record<string, unknown>,
  args: Record<string, unknown>,
  lenient: boolean,
): string | null {
  let validate = validators.get(parameters);
  if (validate === undefined) {
    try {
      validate = lenient ? compileLenient(parameters) : compileJsonSchema(parameters);
    } catch (error) {
      return `the parameters of ${name} are not a usable JSON Schema: ${(error as Error).message}`;
    }
    validators.set(parameters, validate);
  }
  if (validate === null || validate(args)) return null;
  return `arguments do not match the parameters of ${name}: ${firstViolation(validate.errors)}`;
}
