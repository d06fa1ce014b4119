import { knowledgeBaseListQuerySchema } from "@promptrun/contract";
import { PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../../console/console-request.ts";
import { isJsonContentType } from "../../http/content-type.ts";
import { jsonResponse } from "../../http/json-response.ts";
import { parseJsonBody } from "../../http/parse-json-body.ts";
import { readBodyBytes } from "../../http/read-body-bytes.ts";
import { parseQuery } from "../prompts-query.ts";
import type { RestContext } from "../rest-context.ts";
import { NO_STORE, requireKnowledgeBaseParam } from "./kb-path.ts";

/** A JSON body under the global cap: 415 for another type, 413, 400 (as every JSON route). */
export async function readJsonBody({ request, deps }: RestContext): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const { maxBodyBytes, maxJsonDepth } = deps.config;
  return parseJsonBody(await readBodyBytes(request, maxBodyBytes), maxJsonDepth);
}

/** POST /api/v1/knowledge-bases: key (401), subscription (403), 415, 413, 400, slug taken (409) → 201. */
export async function createKnowledgeBaseHandler(context: RestContext): Promise<Response> {
  const { request, deps } = context;
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  const body = await readJsonBody(context);
  const created = await deps.services.knowledge.create(tenant.id, body);
  return jsonResponse(201, created, { location: `/api/v1/knowledge-bases/${created.slug}`, ...NO_STORE });
}

/** GET /api/v1/knowledge-bases?cursor=&limit=: a read, no subscription needed. */
export async function listKnowledgeBasesHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  const query = parseQuery(request, knowledgeBaseListQuerySchema);
  return jsonResponse(200, await deps.services.knowledge.list(tenant.id, query), NO_STORE);
}

/** GET /api/v1/knowledge-bases/{kb}: 404 malformed, unknown or another tenant's. */
export async function getKnowledgeBaseHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireKnowledgeBaseParam(params);
  const tenant = await authenticateRequest(deps, request);
  return jsonResponse(200, await deps.services.knowledge.get(tenant.id, slug), NO_STORE);
}

/** DELETE /api/v1/knowledge-bases/{kb} → 204; its documents and chunks go with it. No subscription check (as cancel). */
export async function deleteKnowledgeBaseHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireKnowledgeBaseParam(params);
  const tenant = await authenticateRequest(deps, request);
  await deps.services.knowledge.delete(tenant.id, slug);
  return new Response(null, { status: 204 });
}
