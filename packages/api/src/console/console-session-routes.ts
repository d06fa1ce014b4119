import type { ConsoleSession } from "@promptrun/contract";
import { PromptrunError } from "@promptrun/core";
import type { ApiDeps, StreamServer } from "../deps.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { jsonResponse } from "../http/json-response.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { clearedSessionCookie, consoleSessionToken, sessionCookie } from "./console-cookie.ts";
import { authenticateRequest, requireOwnOrigin } from "./console-request.ts";

/** Several clients behind one proxy share its address (docs/console.md). */
const UNKNOWN_ADDRESS = "unknown";

const clientAddress = (request: Request, server: StreamServer | undefined): string =>
  server?.requestIP?.(request)?.address ?? UNKNOWN_ADDRESS;

/**
 * POST /console/session `{"apiKey": …}` → 200 `{"tenant": {"id", "name"}}` and the session cookie.
 * Checks: another origin (403), content type (415), size (413), JSON (400), then the service:
 * too many failures from this address (429), body (400), key (401).
 */
export async function signInHandler(
  deps: ApiDeps,
  request: Request,
  server: StreamServer | undefined,
): Promise<Response> {
  const { config, services } = deps;
  requireOwnOrigin(request, config.publicUrl);
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
  }
  const body = parseJsonBody(await readBodyBytes(request, config.maxBodyBytes), config.maxJsonDepth);
  const signedIn = await services.consoleSessions.signIn(body, clientAddress(request, server));
  const answer: ConsoleSession = { tenant: signedIn.tenant };
  return jsonResponse(200, answer, {
    "set-cookie": sessionCookie(signedIn.token, config.publicUrl),
    "cache-control": "no-store",
  });
}

/** DELETE /console/session → 204: the session ends and the browser drops the cookie (also when it had none). */
export async function signOutHandler(deps: ApiDeps, request: Request): Promise<Response> {
  const { config, services } = deps;
  requireOwnOrigin(request, config.publicUrl);
  const token = consoleSessionToken(request);
  if (token !== null) await services.consoleSessions.signOut(token);
  return new Response(null, {
    status: 204,
    headers: { "set-cookie": clearedSessionCookie(config.publicUrl), "cache-control": "no-store" },
  });
}

/**
 * GET /console/session → 200 `{"tenant": {"id", "name"}}` while the session cookie authenticates
 * (with the console header, as every cookie request), else 401: how the console knows, on load,
 * whether to show its sign-in page.
 */
export async function currentSessionHandler(deps: ApiDeps, request: Request): Promise<Response> {
  if (consoleSessionToken(request) === null)
    throw new PromptrunError("unauthorized", "not signed in to the console");
  const tenant = await authenticateRequest(deps, request);
  const answer: ConsoleSession = { tenant: { id: tenant.id, name: tenant.name } };
  return jsonResponse(200, answer, { "cache-control": "no-store" });
}
