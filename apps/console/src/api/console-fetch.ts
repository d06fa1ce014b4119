/**
 * Every request of the console: same-origin, with the session cookie (sent by the browser, never
 * readable by this code) and the `x-promptrun-console` header the server requires of
 * cookie-authenticated requests (docs/console.md "Serving and sign-in").
 */
export const consoleFetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const headers = new Headers(init?.headers);
  headers.set("x-promptrun-console", "1");
  return fetch(input, { ...init, headers, credentials: "same-origin" });
};

/** An API error in words: the server's `{"error"}` message, else the status. */
export class ConsoleApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A REST call of the public API (`/api/v1/…`) as the signed-in tenant; throws ConsoleApiError. */
export async function rest<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const { json, ...rest } = init;
  const response = await consoleFetch(`/api/v1${path}`, {
    ...rest,
    ...(json === undefined
      ? {}
      : {
          body: JSON.stringify(json),
          headers: { ...(rest.headers ?? {}), "content-type": "application/json" },
        }),
  });
  const text = await response.text();
  const body = text ? (JSON.parse(text) as unknown) : null;
  if (!response.ok) {
    const message =
      body && typeof body === "object" && "error" in body ? String(body.error) : `HTTP ${response.status}`;
    throw new ConsoleApiError(response.status, message);
  }
  return body as T;
}
