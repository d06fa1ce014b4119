import {
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_RULE,
  WORKFLOW_RUN_LIST_QUERY_NAMES,
  workflowRunListRequestSchema,
} from "@promptrun/contract";
import { formatValidationError, invalid } from "@promptrun/core";
import { authenticateRequest } from "../../console/console-request.ts";
import { jsonResponse } from "../../http/json-response.ts";
import { numberOrText, refuseUnknownFilters, singleValuedQuery } from "../query-params.ts";
import { withRateLimitHeaders } from "../rate-limited-response.ts";
import type { RestContext } from "../rest-context.ts";
import { readJsonRequest } from "./json-request.ts";
import { NO_STORE, requireWorkflowPath, requireWorkflowRunId, workflowRunLocation } from "./workflow-path.ts";

const KNOWN: ReadonlySet<string> = new Set(WORKFLOW_RUN_LIST_QUERY_NAMES);
const NUMERIC = new Set(["version", "limit"]);

/**
 * POST /api/v1/workflows/{slug}/{version}/runs (docs/WORKFLOWS.md "Runs"), create-run's order:
 * malformed path (404), key (401), subscription (403), content type (415), size (413), JSON
 * (400); the service then resolves the workflow (404), checks the body and inputs (400) and the
 * rate limit (429). `202 {id, thread}`; a replayed Idempotency-Key says so in a header.
 */
export async function createWorkflowRunHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, version } = requireWorkflowPath(params);
  const { services } = deps;
  const tenant = await authenticateRequest(deps, request);
  services.auth.requireActiveSubscription(tenant);
  const body = await readJsonRequest(request, deps);
  const idempotencyKey = request.headers.get("idempotency-key");
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
    // An unknown workflow (404) outranks a malformed header (400), as on create-run.
    await services.workflows.get(tenant.id, slug, version);
    throw invalid(IDEMPOTENCY_KEY_RULE);
  }
  const options = idempotencyKey === null ? undefined : { idempotencyKey };
  return withRateLimitHeaders(deps, tenant.id, "runs.create", async (rateLimitHeaders) => {
    const created = await services.workflowRuns.create(tenant, slug, version, body, options);
    const headers: Record<string, string> = {
      location: workflowRunLocation(created.id),
      ...NO_STORE,
      ...rateLimitHeaders(),
    };
    if (created.replayed) headers["idempotent-replayed"] = "true";
    return jsonResponse(202, { id: created.id, thread: created.thread }, headers);
  });
}

/** GET /api/v1/workflowruns/{id}: 404 malformed, 401, then the run (another tenant's: 404). A read. */
export async function getWorkflowRunHandler({ request, params, deps }: RestContext): Promise<Response> {
  const id = requireWorkflowRunId(params);
  const tenant = await authenticateRequest(deps, request);
  return jsonResponse(200, await deps.services.workflowRuns.get(tenant.id, id), NO_STORE);
}

/** The query as the list request: each name once, unknown names refused by name. */
function workflowRunListRequestOf(url: URL) {
  const request: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [name, value] of singleValuedQuery(url)) {
    if (KNOWN.has(name)) request[name] = NUMERIC.has(name) ? numberOrText(value) : value;
    else unknown.push(name);
  }
  refuseUnknownFilters(unknown);
  const parsed = workflowRunListRequestSchema.safeParse(request);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error, "query"));
  return parsed.data;
}

/** GET /api/v1/workflowruns: 401, then the query (400 naming the parameter); newest first, filters ANDed. */
export async function listWorkflowRunsHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  const { cursor, limit, ...filter } = workflowRunListRequestOf(new URL(request.url));
  const page = await deps.services.workflowRuns.list(tenant.id, filter, { cursor: cursor ?? null, limit });
  return jsonResponse(200, page, NO_STORE);
}

/**
 * POST /api/v1/workflowruns/{id}/cancel: 404 malformed/unknown/other tenant, 401, 409 when the run
 * has ended. Any body is ignored; no subscription check (stopping spending stays possible).
 */
export async function cancelWorkflowRunHandler({ request, params, deps }: RestContext): Promise<Response> {
  const id = requireWorkflowRunId(params);
  const tenant = await authenticateRequest(deps, request);
  return jsonResponse(200, await deps.services.workflowRuns.cancel(tenant.id, id), NO_STORE);
}
