/** Incoming ids are echoed only when they are short and plain, so logs cannot be forged or flooded. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's `x-request-id` when sane, otherwise a fresh UUID. */
export function requestIdFor(request: Request): string {
  const incoming = request.headers.get("x-request-id");
  return incoming !== null && SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}
