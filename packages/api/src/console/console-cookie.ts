/**
 * The console's session cookie (docs/console.md "Serving and sign-in"): HttpOnly (no script
 * reads it), SameSite=Strict (no other site sends it), Path=/ (REST and tRPC see it), Secure when
 * the public URL is https. No Max-Age: the browser forgets it when it closes; the server ends the
 * session after 12 h idle or 7 days.
 */
import { parseCookie, stringifySetCookie } from "cookie";

export const CONSOLE_COOKIE = "promptrun_console";

const cookieOptions = (publicUrl: string) =>
  ({
    name: CONSOLE_COOKIE,
    path: "/",
    httpOnly: true,
    sameSite: "strict",
    secure: publicUrl.startsWith("https:"),
  }) as const;

/** The `Set-Cookie` value that hands the browser a new session. */
export const sessionCookie = (token: string, publicUrl: string): string =>
  stringifySetCookie({ ...cookieOptions(publicUrl), value: token });

/** The `Set-Cookie` value that makes the browser drop it (sign-out). */
export const clearedSessionCookie = (publicUrl: string): string =>
  stringifySetCookie({ ...cookieOptions(publicUrl), value: "", maxAge: 0 });

/** The session token of the request's `Cookie` header (the first of that name), or null. */
export function consoleSessionToken(request: Request): string | null {
  const header = request.headers.get("cookie");
  if (header === null) return null;
  const token = parseCookie(header)[CONSOLE_COOKIE];
  return token === undefined || token === "" ? null : token;
}
