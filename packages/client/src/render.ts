import { type RenderedPrompt, type RenderRequest, renderedPromptSchema } from "@promptrun/contract";
import type { ClientRequest } from "./client-request.ts";

/** Options of `render`. */
export interface RenderOptions {
  signal?: AbortSignal;
}

/**
 * Renders prompt `slug` at `version` (number, tag, `latest` or version id) without running it: the
 * exact request a run would send (messages in send order, the thread's memory window), env var
 * values shown as `[env:NAME]`. Throws ApiError as create-run would for a bad body (`invalid`).
 */
export type RenderPrompt = (
  slug: string,
  version: string | number,
  body: RenderRequest,
  options?: RenderOptions,
) => Promise<RenderedPrompt>;

/** `POST /api/v1/prompts/{slug}/{version}/render` over the client's request function. */
export function createRenderCall(request: ClientRequest): RenderPrompt {
  return (slug, version, body, options = {}) =>
    request(
      "POST",
      `/api/v1/prompts/${encodeURIComponent(slug)}/${encodeURIComponent(String(version))}/render`,
      renderedPromptSchema,
      { body, signal: options.signal },
    );
}
