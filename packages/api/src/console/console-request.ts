import { type AuthenticatedTenant, forbidden } from "@promptrun/core";
import type { ApiDeps } from "../deps.ts";
import { consoleSessionToken } from "./console-cookie.ts";

/** The header every cookie-authenticated request must carry: a cross-site form or image cannot set it. */
export const CONSOLE_HEADER = "x-promptrun-console";

const originOf = (publicUrl: string): string => new URL(publicUrl).origin;

/**
 * Refuses (403) a browser request from another origin than the public URL's. Browsers send
 * `Origin` on every cross-origin request and on same-origin writes; a request without one (a
 * same-origin read, a script outside a browser) passes.
 */
export function requireOwnOrigin(request: Request, publicUrl: string): void {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== originOf(publicUrl)) {
    throw forbidden(
      "this request comes from another origin than the server's public URL (PROMPTRUN_PUBLIC_URL): open the console there",
    );
  }
}

/** The cross-site request checks of a cookie-authenticated request (403). */
function requireConsoleRequest(request: Request, publicUrl: string): void {
  if (request.headers.get(CONSOLE_HEADER) !== "1") {
    throw forbidden(
      `a request authenticated by the console's cookie must carry the header ${CONSOLE_HEADER}: 1`,
    );
  }
  requireOwnOrigin(request, publicUrl);
}

/** The session token the request authenticates by: none with an Authorization header or with the console off. */
export const consoleSessionOf = (deps: ApiDeps, request: Request): string | null =>
  deps.config.console === undefined || request.headers.get("authorization") !== null
    ? null
    : consoleSessionToken(request);

/**
 * The tenant a REST or tRPC request acts for, the one place both ask (docs/console.md "Serving
 * and sign-in"): its `Authorization` header when it has one (cookies are then ignored); else,
 * with the console on, its console session cookie, checked against cross-site use first
 * (`x-promptrun-console: 1`, and the public URL's Origin when one is sent: 403) and then looked
 * up (401 when the session has ended). Neither: 401, missing API key.
 */
export async function authenticateRequest(deps: ApiDeps, request: Request): Promise<AuthenticatedTenant> {
  const { services, config } = deps;
  const token = consoleSessionOf(deps, request);
  if (token === null) return services.auth.authenticate(request.headers.get("authorization"));
  requireConsoleRequest(request, config.publicUrl);
  return services.consoleSessions.authenticate(token);
}
