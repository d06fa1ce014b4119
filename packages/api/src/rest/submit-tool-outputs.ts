import { PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../console/console-request.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { requireUuidParam } from "./path-params.ts";
import type { RestContext } from "./rest-context.ts";

/**
 * POST /api/v1/promptruns/{id}/tool-outputs (docs/PRODUCT-RULES.md "Tool outputs"): malformed id
 * (404), key (401; an API key only — a stream token is not one), subscription (403), content
 * type (415), size (413), JSON (400); the service then answers unknown run (404), body and ids
 * (400), a run not waiting or a pause expired (409), and `Idempotency-Key` replays.
 */
export async function submitToolOutputsHandler({ request, params, deps }: RestContext): Promise<Response> {
  const id = requireUuidParam(params.id, "prompt run not found");
  const { services, config } = deps;
  const tenant = await authenticateRequest(deps, request);
  services.auth.requireActiveSubscription(tenant);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(await readBodyBytes(request, config.maxBodyBytes), config.maxJsonDepth);
  const idempotencyKey = request.headers.get("idempotency-key");
  const submitted = await services.runs.submitToolOutputs(
    tenant,
    id,
    body,
    idempotencyKey === null ? undefined : { idempotencyKey },
  );
  const headers: Record<string, string> = {
    location: `/api/v1/promptruns/${submitted.id}`,
    "cache-control": "no-store",
  };
  if (submitted.replayed) headers["idempotent-replayed"] = "true";
  return jsonResponse(202, { id: submitted.id, thread: submitted.thread }, headers);
}
