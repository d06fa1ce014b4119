import { errorCodes, errorResponseSchema } from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiResponseObject } from "zod-openapi";

export const jsonBody = (schema: z.ZodType) => ({ "application/json": { schema } });

export const rateLimitHeaders = {
  "RateLimit-Limit": z.string().meta({ description: "Requests allowed in a burst (bucket size)." }),
  "RateLimit-Remaining": z.string().meta({ description: "Requests left in the bucket now." }),
  "RateLimit-Reset": z.string().meta({ description: "Seconds until the bucket is full again." }),
};

export const wwwAuthenticateHeader = z
  .string()
  .meta({ description: "`Bearer`: the scheme that authenticates (RFC 6750)." });

const retryAfterHeader = z.string().meta({ description: "Seconds to wait before retrying." });

/**
 * The error body as the server writes it (packages/api/src/errors.ts): `code` is always present and
 * one of the contract's fixed error kinds. The contract's own schema keeps `code` an open string so
 * that older clients tolerate kinds added later.
 */
const documentedErrorSchema = errorResponseSchema
  .extend({
    code: z.enum(errorCodes).meta({
      description:
        "Machine-readable error kind; each maps to one HTTP status (invalid 400, unauthorized 401, forbidden 403, not_found 404, method_not_allowed 405, conflict 409, payload_too_large 413, unsupported_media_type 415, rate_limited 429, internal 500, unavailable 503).",
    }),
  })
  .meta({ id: "ErrorResponse", description: '`{"error": "<message>", "code": "<kind>"}`.' });

export function errorResponse(
  description: string,
  headers?: Record<string, z.ZodType>,
): ZodOpenApiResponseObject {
  return {
    description,
    content: jsonBody(documentedErrorSchema),
    ...(headers ? { headers: z.object(headers) } : {}),
  };
}

export const errors = {
  400: (description: string) => errorResponse(description),
  401: errorResponse(
    "Missing or invalid API key. Only `Authorization: Bearer <API key>` authenticates (scheme in any case, one space); a bare key, another scheme, two credentials or a key in the query string is refused.",
    { "WWW-Authenticate": wwwAuthenticateHeader },
  ),
  403: errorResponse("The account has no active subscription."),
  405: (allow: string, note = "") =>
    errorResponse(
      `Sent by the server for any other method on this path (OpenAPI lists responses per operation, so it appears here): \`405\` with \`Allow: ${allow}\` and code \`method_not_allowed\`.${note}`,
      { Allow: z.literal(allow).meta({ description: "The methods this path accepts." }) },
    ),
  413: errorResponse(
    "Request body larger than the limit (`PROMPTRUN_MAX_BODY_BYTES`, 1 MiB by default). Send large images and files as https URLs, not data: URLs.",
  ),
  415: errorResponse("Content-Type is missing or not application/json (any charset)."),
  429: errorResponse("Rate limited; retry after the given number of seconds.", {
    "Retry-After": retryAfterHeader,
    ...rateLimitHeaders,
  }),
  500: errorResponse("Unexpected server error; the body never carries details."),
};

export const streamTooManyResponse = errorResponse(
  "Too many streams open at once on this thread (SSE and tRPC subscriptions together; 50 by default).",
  { "Retry-After": retryAfterHeader },
);

export const storeUnavailableResponse = errorResponse(
  "The store cannot take the run now: the database is busy (`Retry-After: 1`), its storage is full (`Retry-After: 30`), or the server is shutting down. Nothing was queued; retry (with the same Idempotency-Key).",
  { "Retry-After": retryAfterHeader.optional() },
);

/** The `Idempotency-Key` request header of a route that replays (create-run, tool outputs). */
export const idempotencyKeyHeader = (description: string) =>
  z.string().min(1).max(255).optional().meta({ description });

/** The headers of a 202 naming a run: where it is, and whether a key replayed an earlier answer. */
export const acceptedRunHeaders = {
  Location: z.string().meta({ description: "/api/v1/promptruns/{id}" }),
  "Idempotent-Replayed": z
    .literal("true")
    .optional()
    .meta({ description: "Present when an Idempotency-Key matched an earlier request." }),
};
