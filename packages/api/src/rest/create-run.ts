import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE } from "@promptrun/contract";
import { invalid, PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { requirePromptPath } from "./path-params.ts";
import { withRateLimitHeaders } from "./rate-limited-response.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * POST /api/v1/prompts/{slug}/{version}/runs. Checks in the order of docs/PRODUCT-RULES.md: malformed path (404),
 * key (401), subscription (403), content type (415), size (413), JSON (400); the services then
 * resolve the prompt (404) and validate the body (400), rate limits (429).
 */
export async function createRunHandler({ request, params, deps }: RestContext): Promise<Response> {
  const { slug, version } = requirePromptPath(params);
  const { services, config } = deps;
  const tenant = await authenticateRequest(deps, request);
  services.auth.requireActiveSubscription(tenant);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(await readBodyBytes(request, config.maxBodyBytes), config.maxJsonDepth);
  const idempotencyKey = request.headers.get("idempotency-key");
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
    // An unknown prompt (404) outranks a malformed header (400).
    await services.prompts.get(tenant.id, slug, version);
    throw invalid(IDEMPOTENCY_KEY_RULE);
  }
  return withRateLimitHeaders(deps, tenant.id, "runs.create", async (rateLimitHeaders) => {
    const created = await services.runs.create(
      tenant,
      slug,
      version,
      body,
      idempotencyKey === null ? undefined : { idempotencyKey },
    );
    const headers: Record<string, string> = {
      location: `/api/v1/promptruns/${created.id}`,
      "cache-control": "no-store",
      ...rateLimitHeaders(),
    };
    if (created.replayed) headers["idempotent-replayed"] = "true";
    return jsonResponse(202, { id: created.id, thread: created.thread }, headers);
  });
}
