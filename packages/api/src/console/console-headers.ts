/**
 * Headers on every response under /console (docs/console.md "Serving and sign-in"): the app may
 * load only its own scripts and styles and talk only to this server; no page may frame it; its
 * URLs (run and thread ids) never leak to another site in a Referer.
 */
const CONSOLE_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data: blob: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

export const isConsolePath = (path: string): boolean => path === "/console" || path.startsWith("/console/");

/** Adds the console's headers, copying the response when its headers are immutable. */
export function withConsoleHeaders(response: Response): Response {
  try {
    for (const [name, value] of Object.entries(CONSOLE_HEADERS)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of Object.entries(CONSOLE_HEADERS)) copy.headers.set(name, value);
    return copy;
  }
}
