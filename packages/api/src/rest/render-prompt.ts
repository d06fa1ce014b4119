import { PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { requirePromptPath } from "./path-params.ts";
import { withRateLimitHeaders } from "./rate-limited-response.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * POST /api/v1/prompts/{slug}/{version}/render: what a run would send, without running it
 * (docs/PRODUCT-RULES.md "Render"). Create-run's order without its subscription check (a read):
 * malformed path (404), key (401), content type (415), size (413), JSON (400); the service then
 * resolves the version (404), validates body and inputs (400) and takes from the render bucket (429).
 */
export async function renderPromptHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, version } = requirePromptPath(params);
  const { services, config } = deps;
  const tenant = await authenticateRequest(deps, request);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(await readBodyBytes(request, config.maxBodyBytes), config.maxJsonDepth);
  return withRateLimitHeaders(deps, tenant.id, "prompts.render", async (rateLimitHeaders) => {
    const rendered = await services.runs.render(tenant.id, slug, version, body);
    return jsonResponse(200, rendered, { "cache-control": "no-store", ...rateLimitHeaders() });
  });
}
