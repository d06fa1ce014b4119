/**
 * `Bearer <credential>`: the scheme word in any case, exactly one space, one credential (RFC 6750
 * token characters). Surrounding whitespace is not part of a header's value (RFC 9110) and is
 * ignored. Anything else — a bare key, another scheme, two credentials — yields null.
 */
const BEARER = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** The credential of an `Authorization: Bearer …` header value, or null when it is not exactly that. */
export function bearerCredential(header: string | null): string | null {
  if (header === null) return null;
  return BEARER.exec(header.trim())?.[1] ?? null;
}
