import { METADATA_QUERY_PREFIX, RUN_LIST_QUERY_NAMES, runListRequestSchema } from "@promptrun/contract";
import { formatValidationError, invalid } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { jsonResponse } from "../http/json-response.ts";
import { numberOrText, refuseUnknownFilters, singleValuedQuery } from "./query-params.ts";
import type { RestContext } from "./rest-context.ts";

const KNOWN: ReadonlySet<string> = new Set(RUN_LIST_QUERY_NAMES);
const NUMERIC = new Set(["version", "limit"]);

/** The query as the list request: `metadata.<key>` gathered, unknown names refused by name. */
function runListRequestOf(url: URL) {
  const request: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  const unknown: string[] = [];
  for (const [name, value] of singleValuedQuery(url)) {
    if (name.startsWith(METADATA_QUERY_PREFIX)) metadata[name.slice(METADATA_QUERY_PREFIX.length)] = value;
    else if (KNOWN.has(name)) request[name] = NUMERIC.has(name) ? numberOrText(value) : value;
    else unknown.push(name);
  }
  refuseUnknownFilters(unknown);
  if (Object.keys(metadata).length > 0) request.metadata = metadata;
  const parsed = runListRequestSchema.safeParse(request);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error, "query"));
  return parsed.data;
}

/**
 * GET /api/v1/promptruns: 401, then the query (400 naming the parameter); newest first, filters
 * combined with AND (docs/PRODUCT-RULES.md "Listing runs"). Reading needs no active subscription.
 */
export async function listRunsHandler({ request, deps }: RestContext): Promise<Response> {
  const tenant = await authenticateRequest(deps, request);
  const { cursor, limit, ...filter } = runListRequestOf(new URL(request.url));
  const page = await deps.services.runs.list(tenant.id, filter, { cursor: cursor ?? null, limit });
  return jsonResponse(200, page, { "cache-control": "no-store" });
}
