import { type ErrorCode, httpStatusByErrorCode } from "@promptrun/contract";
import { PromptrunError } from "@promptrun/core";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import type { Logger } from "./deps.ts";

/** The one table from error kind to tRPC code (HTTP statuses come from the contract). */
export const trpcCodeByErrorCode: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  invalid: "BAD_REQUEST",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  method_not_allowed: "METHOD_NOT_SUPPORTED",
  conflict: "CONFLICT",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  rate_limited: "TOO_MANY_REQUESTS",
  unavailable: "SERVICE_UNAVAILABLE",
  internal: "INTERNAL_SERVER_ERROR",
};

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

/** RFC 6750: a 401 names the scheme that authenticates (API keys and stream tokens alike). */
export const WWW_AUTHENTICATE_BEARER = { "www-authenticate": "Bearer" } as const;

/** `{"error": message, "code": kind}` with the kind's status; Retry-After on 429, WWW-Authenticate on 401. */
export function errorResponse(code: ErrorCode, message: string, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify({ error: message, code }), {
    status: httpStatusByErrorCode[code],
    headers: { ...JSON_HEADERS, ...(code === "unauthorized" ? WWW_AUTHENTICATE_BEARER : {}), ...headers },
  });
}

/** Maps anything thrown to a response; unknown errors become a generic 500 and are logged, never sent. */
export function responseForError(
  error: unknown,
  logger: Logger,
  context: Record<string, unknown> = {},
): Response {
  if (PromptrunError.isInstance(error)) {
    const headers: Record<string, string> = {};
    if (error.retryAfterSeconds !== undefined)
      headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfterSeconds)));
    return errorResponse(error.code, error.message, headers);
  }
  logger.error(
    {
      ...context,
      err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error),
    },
    "unhandled error",
  );
  return errorResponse("internal", "internal server error");
}
