import { PromptrunError } from "@promptrun/core";
import type { ApiDeps } from "../../deps.ts";
import { isJsonContentType } from "../../http/content-type.ts";
import { parseJsonBody } from "../../http/parse-json-body.ts";
import { readBodyBytes } from "../../http/read-body-bytes.ts";

/**
 * The JSON body of a write, checked in the order of every REST write: content type (415), size
 * (413: a declared length over the limit unread, a chunked body cut there), then UTF-8, nesting
 * depth and JSON (400). Called after authentication and the subscription check.
 */
export async function readJsonRequest(request: Request, deps: ApiDeps): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const bytes = await readBodyBytes(request, deps.config.maxBodyBytes);
  return parseJsonBody(bytes, deps.config.maxJsonDepth);
}
