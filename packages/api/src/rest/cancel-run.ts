import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { requireUuidParam } from "./path-params.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * POST /api/v1/promptruns/{id}/cancel (extension): 404 malformed/unknown/other tenant, 401,
 * 409 when the run already ended. Any body is ignored. No subscription check: stopping
 * spending stays possible for an inactive account.
 */
export async function cancelRunHandler({ request, params, deps }: RestContext): Promise<Response> {
  const id = requireUuidParam(params.id, "prompt run not found");
  const tenant = await authenticateRequest(deps, request);
  const run = await deps.services.runs.cancel(tenant.id, id);
  return jsonResponse(200, run, { "cache-control": "no-store" });
}
