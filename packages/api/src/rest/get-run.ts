import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { requireUuidParam } from "./path-params.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * GET /api/v1/promptruns/{id}: 404 for a malformed id, then 401; reading needs no active
 * subscription. Another tenant's run is a 404, never a 403 (existence is not revealed).
 */
export async function getRunHandler({ request, params, deps }: RestContext): Promise<Response> {
  const id = requireUuidParam(params.id, "prompt run not found");
  const tenant = await authenticateRequest(deps, request);
  const run = await deps.services.runs.get(tenant.id, id);
  return jsonResponse(200, run, { "cache-control": "no-store" });
}
