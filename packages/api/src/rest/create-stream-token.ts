import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { requireUuidParam } from "./path-params.ts";
import { withRateLimitHeaders } from "./rate-limited-response.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * POST /api/v1/threads/{thread}/stream-token: 404 malformed thread, 401, 403, 429; the thread
 * need not exist. The request body is not defined by the REST contract and is never read.
 */
export async function createStreamTokenHandler({ request, params, deps }: RestContext): Promise<Response> {
  const thread = requireUuidParam(params.thread, "malformed thread id: must be a UUID");
  const { services } = deps;
  const tenant = await authenticateRequest(deps, request);
  services.auth.requireActiveSubscription(tenant);
  return withRateLimitHeaders(deps, tenant.id, "stream-token", async (rateLimitHeaders) => {
    const token = await services.streamTokens.issue(tenant, thread);
    return jsonResponse(200, token, { "cache-control": "no-store", ...rateLimitHeaders() });
  });
}
