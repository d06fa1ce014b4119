import { documentListQuerySchema } from "@promptrun/contract";
import { authenticateRequest } from "../../console/console-request.ts";
import { jsonResponse } from "../../http/json-response.ts";
import { parseQuery } from "../prompts-query.ts";
import { withRateLimitHeaders } from "../rate-limited-response.ts";
import type { RestContext } from "../rest-context.ts";
import { NO_STORE, requireDocumentParams, requireKnowledgeBaseParam } from "./kb-path.ts";
import { readJsonBody } from "./knowledge-bases.ts";

/** GET /api/v1/knowledge-bases/{kb}/documents?status=&cursor=&limit=. */
export async function listDocumentsHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireKnowledgeBaseParam(params);
  const tenant = await authenticateRequest(deps, request);
  const query = parseQuery(request, documentListQuerySchema);
  return jsonResponse(200, await deps.services.knowledge.listDocuments(tenant.id, slug, query), NO_STORE);
}

/** GET /api/v1/knowledge-bases/{kb}/documents/{id}: poll it until `ready` or `failed`. */
export async function getDocumentHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, id } = requireDocumentParams(params);
  const tenant = await authenticateRequest(deps, request);
  return jsonResponse(200, await deps.services.knowledge.getDocument(tenant.id, slug, id), NO_STORE);
}

/** DELETE /api/v1/knowledge-bases/{kb}/documents/{id} → 204 (its chunks with it). */
export async function deleteDocumentHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, id } = requireDocumentParams(params);
  const tenant = await authenticateRequest(deps, request);
  await deps.services.knowledge.deleteDocument(tenant.id, slug, id);
  return new Response(null, { status: 204 });
}

/**
 * POST /api/v1/knowledge-bases/{kb}/search: key, subscription (a search may cost an embedding
 * call), 415, 413, 400; the service checks the body (topK over 50: 400).
 */
export async function searchHandler(context: RestContext): Promise<Response> {
  const { request, params, deps } = context;
  const slug = requireKnowledgeBaseParam(params);
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  const body = await readJsonBody(context);
  return withRateLimitHeaders(deps, tenant.id, "knowledge.search", async (rateLimitHeaders) => {
    const found = await deps.services.knowledge.search(tenant.id, slug, body);
    return jsonResponse(200, found, { ...NO_STORE, ...rateLimitHeaders() });
  });
}
