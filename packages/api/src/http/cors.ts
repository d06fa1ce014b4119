/**
 * CORS for the two browser-facing surfaces: the SSE stream and tRPC, both authorised by a
 * stream token a backend handed to the page (or by the app's own backend). No cookies are
 * involved, so any origin may call them; the REST API (API keys) stays server-to-server and
 * sends no CORS headers at all.
 */
const BROWSER_FACING = /^\/(stream|trpc)(\/|$)/;

const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "x-request-id, retry-after",
};

const PREFLIGHT_HEADERS: Record<string, string> = {
  ...CORS_HEADERS,
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, last-event-id, trpc-accept, trpc-batch-mode",
  "access-control-max-age": "600",
  vary: "origin",
};

export const isBrowserFacing = (path: string): boolean => BROWSER_FACING.test(path);

export const preflightResponse = (): Response =>
  new Response(null, { status: 204, headers: PREFLIGHT_HEADERS });

/** Adds the CORS headers, copying the response when its headers are immutable. */
export function withCors(response: Response): Response {
  try {
    for (const [name, value] of Object.entries(CORS_HEADERS)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of Object.entries(CORS_HEADERS)) copy.headers.set(name, value);
    return copy;
  }
}
