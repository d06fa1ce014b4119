import { movedByOf, PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * POST /api/v1/prompts: one prompt file as JSON. Checks in the order of docs/PRODUCT-RULES.md:
 * key (401), subscription (403), content type (415), size (413), JSON (400), then the push
 * checks (400 naming the field) and the prompt-version quota (409). `201` for a new version,
 * `200` with `created: false` when the newest version already has this content: a retried push
 * adds nothing, so no Idempotency-Key is needed.
 */
export async function pushPromptHandler({ request, deps }: RestContext): Promise<Response> {
  const { services, config } = deps;
  const tenant = await authenticateRequest(deps, request);
  services.auth.requireActiveSubscription(tenant);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(await readBodyBytes(request, config.maxBodyBytes), config.maxJsonDepth);
  const [pushed] = await services.prompts.push(tenant.id, [body], movedByOf(tenant));
  if (pushed === undefined) throw new Error("a push of one file returned no result");
  const headers = {
    location: `/api/v1/prompts/${pushed.slug}/${pushed.version}`,
    "cache-control": "no-store",
  };
  return jsonResponse(pushed.created ? 201 : 200, pushed, headers);
}
