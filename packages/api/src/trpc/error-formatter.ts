import { type ErrorCode, httpStatusByErrorCode } from "@promptrun/contract";
import { formatValidationError, PromptrunError } from "@promptrun/core";
import type { TRPC_ERROR_CODE_KEY, TRPCError } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { ZodError } from "zod";
import { trpcCodeByErrorCode } from "../errors.ts";

export interface PromptrunErrorData {
  /** tRPC's code key (`NOT_FOUND`, …), what @trpc/client reads. */
  code: TRPC_ERROR_CODE_KEY;
  httpStatus: number;
  /** The domain error kind, as in REST bodies. */
  errorCode: ErrorCode;
  path?: string;
  /** Rate limits: seconds to wait (also sent as `Retry-After`). */
  retryAfterSeconds?: number;
}

export interface PromptrunErrorShape {
  message: string;
  code: (typeof TRPC_ERROR_CODES_BY_KEY)[TRPC_ERROR_CODE_KEY];
  data: PromptrunErrorData;
}

const GENERIC_INTERNAL_MESSAGE = "internal server error";

/** tRPC codes that have a domain kind of their own; the rest read as `invalid` or `internal`. */
const errorCodeByTrpcCode: Partial<Record<TRPC_ERROR_CODE_KEY, ErrorCode>> = {
  BAD_REQUEST: "invalid",
  PARSE_ERROR: "invalid",
  UNAUTHORIZED: "unauthorized",
  FORBIDDEN: "forbidden",
  NOT_FOUND: "not_found",
  METHOD_NOT_SUPPORTED: "method_not_allowed",
  CONFLICT: "conflict",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  UNSUPPORTED_MEDIA_TYPE: "unsupported_media_type",
  TOO_MANY_REQUESTS: "rate_limited",
  SERVICE_UNAVAILABLE: "unavailable",
};

/** An error nobody meant to show a client: logged by the handler, sent as a generic 500. */
export function isUnexpectedError(error: TRPCError): boolean {
  return error.code === "INTERNAL_SERVER_ERROR" && !PromptrunError.isInstance(error.cause);
}

/**
 * The root error formatter: a PromptrunError keeps its message and maps through the one code
 * table; input validation reads like the REST messages; anything unexpected is hidden. Never a
 * stack trace. The HTTP status of the response follows `data.httpStatus`.
 */
export function formatTrpcError(options: {
  error: TRPCError;
  path?: string | undefined;
  /** tRPC's own status for the error's code (used for codes the domain has no kind for). */
  defaultHttpStatus: number;
}): PromptrunErrorShape {
  const { error, path } = options;
  const cause = error.cause;
  let key: TRPC_ERROR_CODE_KEY;
  let message: string;
  let errorCode: ErrorCode;
  let httpStatus: number | undefined;
  let retryAfterSeconds: number | undefined;

  if (PromptrunError.isInstance(cause)) {
    errorCode = cause.code;
    key = trpcCodeByErrorCode[cause.code];
    message = cause.message;
    httpStatus = httpStatusByErrorCode[cause.code];
    retryAfterSeconds = cause.retryAfterSeconds;
  } else if (cause instanceof ZodError) {
    errorCode = "invalid";
    key = "BAD_REQUEST";
    message = formatValidationError(cause, "input");
  } else if (isUnexpectedError(error)) {
    errorCode = "internal";
    key = "INTERNAL_SERVER_ERROR";
    message = GENERIC_INTERNAL_MESSAGE;
  } else {
    key = error.code;
    const known = errorCodeByTrpcCode[key];
    errorCode = known ?? (options.defaultHttpStatus >= 500 ? "internal" : "invalid");
    message = error.message;
    if (known === undefined) httpStatus = options.defaultHttpStatus;
  }

  const data: PromptrunErrorData = {
    code: key,
    httpStatus: httpStatus ?? httpStatusByErrorCode[errorCode],
    errorCode,
  };
  if (path !== undefined) data.path = path;
  if (retryAfterSeconds !== undefined) data.retryAfterSeconds = retryAfterSeconds;
  return { message, code: TRPC_ERROR_CODES_BY_KEY[key], data };
}
