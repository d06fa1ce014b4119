import { z } from "zod";
import { authenticateRequest } from "../../console/console-request.ts";
import { jsonResponse } from "../../http/json-response.ts";
import { parseQuery } from "../prompts-query.ts";
import { ifNoneMatchHits } from "../prompts-read.ts";
import type { RestContext } from "../rest-context.ts";
import { readJsonRequest } from "./json-request.ts";
import {
  NO_STORE,
  requireWorkflowPath,
  requireWorkflowSlug,
  workflowVersionLocation,
} from "./workflow-path.ts";

/** `?cursor=&limit=` of the workflow lists; any other name is a 400 naming it. */
const pageQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * POST /api/v1/workflows: one workflow file as JSON (docs/WORKFLOWS.md "Workflow files"). Key
 * (401), subscription (403), content type (415), size (413), JSON (400), then the push checks
 * (400 naming the file's path). `201` for a new version, `200` with `created: false` when the
 * newest version already has this content: a retried push adds nothing.
 */
export async function pushWorkflowHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  const body = await readJsonRequest(request, deps);
  const [pushed] = await deps.services.workflows.push(tenant.id, [body]);
  if (pushed === undefined) throw new Error("a push of one file returned no result");
  const headers = { location: workflowVersionLocation(pushed.slug, pushed.version), ...NO_STORE };
  return jsonResponse(pushed.created ? 201 : 200, pushed, headers);
}

/** GET /api/v1/workflows?cursor=&limit=: the tenant's workflow summaries. A read: no subscription needed. */
export async function listWorkflowsHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  const page = parseQuery(request, pageQuerySchema);
  return jsonResponse(200, await deps.services.workflows.list(tenant.id, page), NO_STORE);
}

/** GET /api/v1/workflows/{slug}/versions?cursor=&limit=: whole versions, newest first. */
export async function listWorkflowVersionsHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireWorkflowSlug(params);
  const tenant = await authenticateRequest(deps, request);
  const page = parseQuery(request, pageQuerySchema);
  return jsonResponse(200, await deps.services.workflows.versions(tenant.id, slug, page), NO_STORE);
}

/**
 * GET /api/v1/workflows/{slug}/{version}: the whole version (number, tag, `latest` or id), with
 * `ETag: "<contentHash>"` and a 304 for a matching `If-None-Match`, as prompt versions.
 */
export async function getWorkflowVersionHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, version } = requireWorkflowPath(params);
  const tenant = await authenticateRequest(deps, request);
  const found = await deps.services.workflows.get(tenant.id, slug, version);
  const headers = { etag: `"${found.contentHash}"`, "cache-control": "private, no-cache" };
  if (ifNoneMatchHits(request.headers.get("if-none-match"), headers.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return jsonResponse(200, found, headers);
}

/**
 * PUT /api/v1/workflows/{slug}/tags/{tag} `{version}`: key (401), subscription (403), content
 * type (415), size (413), JSON and body or tag (400), unknown slug or version (404).
 */
export async function setWorkflowTagHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireWorkflowSlug(params);
  const tag = params.tag ?? "";
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  const body = await readJsonRequest(request, deps);
  return jsonResponse(200, await deps.services.workflows.tag(tenant.id, slug, tag, body), NO_STORE);
}
