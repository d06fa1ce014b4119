import { promptListQuerySchema, promptVersionsQuerySchema, slugSchema } from "@promptrun/contract";
import { notFound } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { requirePromptPath } from "./path-params.ts";
import { parseQuery } from "./prompts-query.ts";
import type { RestContext } from "./rest-context.ts";

/** Lists and summaries change with every push: never cached. */
const NO_STORE = { "cache-control": "no-store" };

/** A malformed slug is a 404, like an unknown one (docs/PRODUCT-RULES.md "Prompts over REST"). */
function requireSlugParam(params: Record<string, string>): string {
  const { slug } = params;
  if (slug === undefined || !slugSchema.safeParse(slug).success) throw notFound("prompt not found");
  return slug;
}

/** GET /api/v1/prompts?q=&tag=&cursor=&limit=: the tenant's prompt summaries in slug order. A read: no subscription needed. */
export async function listPromptsHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  const query = parseQuery(request, promptListQuerySchema);
  return jsonResponse(200, await deps.services.prompts.list(tenant.id, query), NO_STORE);
}

/** GET /api/v1/prompts/{slug}: one summary; 404 for an unknown (or another tenant's) slug. */
export async function getPromptHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireSlugParam(params);
  const tenant = await authenticateRequest(deps, request);
  return jsonResponse(200, await deps.services.prompts.summary(tenant.id, slug), NO_STORE);
}

/** GET /api/v1/prompts/{slug}/versions?cursor=&limit=: whole versions, newest first. */
export async function listPromptVersionsHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireSlugParam(params);
  const tenant = await authenticateRequest(deps, request);
  const query = parseQuery(request, promptVersionsQuerySchema);
  return jsonResponse(200, await deps.services.prompts.versions(tenant.id, slug, query), NO_STORE);
}

/** `If-None-Match` holds `*` or this entity tag (weak or strong: comparison is weak, RFC 9110 §13.1.2). */
export function ifNoneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header
    .split(",")
    .map((candidate) => candidate.trim().replace(/^W\//, ""))
    .some((candidate) => candidate === "*" || candidate === etag);
}

/**
 * GET /api/v1/prompts/{slug}/{version}: the whole version, `{version}` a number, tag, `latest`
 * or id. `ETag: "<contentHash>"`; a matching `If-None-Match` is a 304 without a body. Clients
 * revalidate (`no-cache`): a tag or `latest` may point elsewhere after a push.
 */
export async function getPromptVersionHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, version } = requirePromptPath(params);
  const tenant = await authenticateRequest(deps, request);
  const found = await deps.services.prompts.get(tenant.id, slug, version);
  const headers = { etag: `"${found.contentHash}"`, "cache-control": "private, no-cache" };
  if (ifNoneMatchHits(request.headers.get("if-none-match"), headers.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return jsonResponse(200, found, headers);
}
