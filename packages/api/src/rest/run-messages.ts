import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { requireUuidParam } from "./path-params.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * GET /api/v1/promptruns/{id}/messages (docs/PRODUCT-RULES.md "Run messages"): what the run's
 * first model call was sent. As get-run: 404 for a malformed id, then 401; no subscription needed;
 * another tenant's run is a 404.
 */
export async function runMessagesHandler({ request, params, deps }: RestContext): Promise<Response> {
  const id = requireUuidParam(params.id, "prompt run not found");
  const tenant = await authenticateRequest(deps, request);
  const messages = await deps.services.runs.messages(tenant.id, id);
  return jsonResponse(200, messages, { "cache-control": "no-store" });
}
