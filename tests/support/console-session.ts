/**
 * Signing in to the web console from a test, as the console does (docs/console.md "Serving and
 * sign-in"): `POST /console/session` with an API key, then every API request with the cookie,
 * `x-promptrun-console: 1` and the server's Origin. A browser test can skip the sign-in page by
 * putting `browserCookie(…)` into its context (Playwright: `context.addCookies([cookie])`).
 */
import type { TestServer } from "./server.ts";

export const CONSOLE_COOKIE = "promptrun_console";

export interface ConsoleSession {
  /** The cookie's value: the session token (the server keeps only its SHA-256). */
  token: string;
  tenant: { id: string; name: string };
  /** What a console request sends: `Cookie`, `x-promptrun-console: 1`, and `Origin` = the server. */
  headers: Record<string, string>;
}

/** Signs in with `apiKey` (default: the server's demo key); throws with the server's answer when refused. */
export async function signInToConsole(
  server: Pick<TestServer, "url" | "apiKey">,
  apiKey = server.apiKey,
): Promise<ConsoleSession> {
  const response = await fetch(`${server.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ apiKey }),
  });
  if (response.status !== 200)
    throw new Error(`console sign-in: ${response.status} ${await response.text()}`);
  const pair = (response.headers.get("set-cookie") ?? "").split(";", 1)[0] ?? "";
  const token = pair.startsWith(`${CONSOLE_COOKIE}=`) ? pair.slice(CONSOLE_COOKIE.length + 1) : "";
  if (token === "") throw new Error("console sign-in: no session cookie in the answer");
  const { tenant } = (await response.json()) as { tenant: { id: string; name: string } };
  return {
    token,
    tenant,
    headers: { cookie: `${CONSOLE_COOKIE}=${token}`, "x-promptrun-console": "1", origin: server.url },
  };
}

/** The session as a browser cookie (Playwright's `addCookies` shape), set as the server sets it. */
export function browserCookie(server: Pick<TestServer, "url">, session: Pick<ConsoleSession, "token">) {
  return {
    name: CONSOLE_COOKIE,
    value: session.token,
    url: server.url,
    httpOnly: true,
    secure: server.url.startsWith("https:"),
    sameSite: "Strict" as const,
  };
}
