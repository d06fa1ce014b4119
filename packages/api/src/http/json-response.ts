const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** A JSON response with the given status and extra headers. */
export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": JSON_CONTENT_TYPE, ...headers },
  });
}
