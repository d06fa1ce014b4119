import type { PromptrunServices } from "@promptrun/core";

export type { RateLimitedAction } from "@promptrun/core";

import type { RateLimitedAction } from "@promptrun/core";

/** `RateLimit-Limit/Remaining/Reset` for the tenant's bucket of `action`. */
export function rateLimitHeaders(
  services: PromptrunServices,
  tenantId: string,
  action: RateLimitedAction,
): Record<string, string> {
  const state = services.rateLimits.state(tenantId, action);
  return {
    "ratelimit-limit": String(state.limit),
    "ratelimit-remaining": String(Math.max(0, Math.floor(state.remaining))),
    "ratelimit-reset": String(Math.max(0, Math.ceil(state.resetSeconds))),
  };
}
