import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { singleValuedQuery } from "./query-params.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * GET /api/v1/usage: 401, then the query (unknown names, bad dates or groupBy, a range over 366
 * days → 400); ended runs created in [from, to) grouped (docs/PRODUCT-RULES.md "Usage").
 */
export async function usageHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  const query = Object.fromEntries(singleValuedQuery(new URL(request.url)));
  const usage = await deps.services.runs.usage(tenant.id, query);
  return jsonResponse(200, usage, { "cache-control": "no-store" });
}
