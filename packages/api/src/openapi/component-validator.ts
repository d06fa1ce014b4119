import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenApiDocument } from "./build-openapi-document.ts";

export interface ComponentValidator {
  /** Validates `value` against `#/components/schemas/<name>`; returns the errors, empty when valid. */
  validate(name: string, value: unknown): string[];
}

const DOCUMENT_ID = "urn:promptrun:openapi";

/**
 * Test support (ajv is a devDependency): compiles the document's component schemas as JSON
 * Schema 2020-12 (what OpenAPI 3.1 uses), so real responses can be checked against it.
 */
export function createComponentValidator(document: OpenApiDocument): ComponentValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components }, DOCUMENT_ID);
  return {
    validate(name, value) {
      const validate = ajv.getSchema(`${DOCUMENT_ID}#/components/schemas/${name}`);
      if (!validate) throw new Error(`no component schema named ${name}`);
      if (validate(value)) return [];
      return (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""}`);
    },
  };
}
