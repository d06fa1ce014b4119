import { PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { requireUuidParam } from "./path-params.ts";
import { numberOrText, singleValuedQuery } from "./query-params.ts";
import type { RestContext } from "./rest-context.ts";

const MALFORMED_THREAD = "malformed thread id: must be a UUID";

/**
 * GET /api/v1/threads/{thread}/messages: 404 malformed thread, 401, the query (400); one channel's
 * messages oldest first. An unknown thread, or another tenant's, has no messages (docs/PRODUCT-RULES.md
 * "Thread memory"). Reading needs no active subscription.
 */
export async function listThreadMessagesHandler({ request, params, deps }: RestContext): Promise<Response> {
  const thread = requireUuidParam(params.thread, MALFORMED_THREAD);
  const tenant = await authenticateRequest(deps, request);
  const query: Record<string, unknown> = {};
  for (const [name, value] of singleValuedQuery(new URL(request.url))) {
    query[name] = name === "limit" ? numberOrText(value) : value;
  }
  const page = await deps.services.threads.messages(tenant.id, thread, query);
  return jsonResponse(200, page, { "cache-control": "no-store" });
}

/**
 * POST /api/v1/threads/{thread}/messages: 404 malformed thread, 401, 403, 415, 413, 400 (JSON, then
 * the body by path); 201 `{imported, skipped}`, also when every message was skipped.
 */
export async function importThreadMessagesHandler({ request, params, deps }: RestContext): Promise<Response> {
  const thread = requireUuidParam(params.thread, MALFORMED_THREAD);
  const { services, config } = deps;
  const tenant = await authenticateRequest(deps, request);
  services.auth.requireActiveSubscription(tenant);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(await readBodyBytes(request, config.maxBodyBytes), config.maxJsonDepth);
  const result = await services.threads.import(tenant.id, thread, body);
  return jsonResponse(201, result, { "cache-control": "no-store" });
}
