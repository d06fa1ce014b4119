import { slugSchema, tagHistoryQuerySchema } from "@promptrun/contract";
import { movedByOf, notFound, PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { parseQuery } from "./prompts-query.ts";
import type { RestContext } from "./rest-context.ts";

/** Slug and tag of a tag URL: a malformed slug is a 404; the tag itself is checked by the service (400). */
function tagPath(params: Record<string, string>): { slug: string; tag: string } {
  const { slug, tag } = params;
  if (slug === undefined || !slugSchema.safeParse(slug).success) throw notFound("prompt not found");
  if (tag === undefined) throw notFound("tag not found");
  return { slug, tag };
}

/**
 * PUT /api/v1/prompts/{slug}/tags/{tag} `{version, expectedVersion?}`: key (401), subscription
 * (403), content type (415), size (413), JSON and body (400), unknown slug or version (404), a
 * failed guard (409 naming where the tag points). docs/PRODUCT-RULES.md "Prompts over REST".
 */
export async function setTagHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, tag } = tagPath(params);
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(
    await readBodyBytes(request, deps.config.maxBodyBytes),
    deps.config.maxJsonDepth,
  );
  const moved = await deps.services.prompts.moveTag(tenant.id, slug, tag, body, movedByOf(tenant));
  return jsonResponse(200, moved, { "cache-control": "no-store" });
}

/** DELETE /api/v1/prompts/{slug}/tags/{tag}: 204; 404 for an unknown slug or tag. */
export async function deleteTagHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, tag } = tagPath(params);
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  await deps.services.prompts.deleteTag(tenant.id, slug, tag, movedByOf(tenant));
  return new Response(null, { status: 204 });
}

/** GET /api/v1/prompts/{slug}/tags/{tag}/history?cursor=&limit=: the tag's moves, newest first. A read. */
export async function tagHistoryHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, tag } = tagPath(params);
  const tenant = await authenticateRequest(deps, request);
  const query = parseQuery(request, tagHistoryQuerySchema);
  const history = await deps.services.prompts.tagHistory(tenant.id, slug, tag, query);
  return jsonResponse(200, history, { "cache-control": "no-store" });
}
