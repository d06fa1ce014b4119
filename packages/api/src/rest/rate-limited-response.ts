import { PromptrunError } from "@promptrun/core";
import type { ApiDeps } from "../deps.ts";
import { responseForError } from "../errors.ts";
import { type RateLimitedAction, rateLimitHeaders } from "./rate-limit-headers.ts";

/**
 * Runs a rate-limited operation; a 429 it throws becomes a response carrying Retry-After and
 * the RateLimit-* headers of the tenant's bucket. Other errors propagate.
 */
export async function withRateLimitHeaders(
  deps: ApiDeps,
  tenantId: string,
  action: RateLimitedAction,
  operation: (headers: () => Record<string, string>) => Promise<Response>,
): Promise<Response> {
  const headers = () => rateLimitHeaders(deps.services, tenantId, action);
  try {
    return await operation(headers);
  } catch (error) {
    if (!PromptrunError.isInstance(error) || error.code !== "rate_limited") throw error;
    const response = responseForError(error, deps.logger);
    for (const [name, value] of Object.entries(headers())) response.headers.set(name, value);
    return response;
  }
}
