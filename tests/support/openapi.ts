/**
 * Checks real responses against the server's own OpenAPI document (`/api/v1/openapi.json`):
 * each operation's response schema is compiled with ajv (JSON Schema 2020-12, what OpenAPI 3.1
 * uses), its `$ref`s resolved against the document's components.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export interface OpenApiDocumentJson {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown> };
}

/** Fetches the document a running server serves. */
export async function fetchOpenApiDocument(baseUrl: string): Promise<OpenApiDocumentJson> {
  const response = await fetch(`${baseUrl}/api/v1/openapi.json`);
  if (response.status !== 200) throw new Error(`openapi.json answered ${response.status}`);
  return (await response.json()) as OpenApiDocumentJson;
}

/** Validator of one response (`application/json`) of one operation of the document. */
export function responseValidator(
  document: OpenApiDocumentJson,
  path: string,
  method: string,
  status: string,
): ValidateFunction {
  const operation = document.paths[path]?.[method] as
    | { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
    | undefined;
  const schema = operation?.responses[status]?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`no schema for ${method.toUpperCase()} ${path} ${status}`);
  return componentAwareAjv(document).compile(rewriteRefs(schema) as object);
}

/** Validator of one component schema of the document (`#/components/schemas/<name>`). */
export function componentValidator(document: OpenApiDocumentJson, name: string): ValidateFunction {
  return componentAwareAjv(document).compile({ $ref: `doc#/components/schemas/${name}` });
}

function componentAwareAjv(document: OpenApiDocumentJson): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "doc", components: document.components }, "doc");
  return ajv;
}

const rewriteRefs = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(rewriteRefs)
    : value && typeof value === "object"
      ? Object.fromEntries(
          Object.entries(value).map(([key, inner]) => [
            key,
            key === "$ref" && typeof inner === "string" ? `doc${inner}` : rewriteRefs(inner),
          ]),
        )
      : value;
