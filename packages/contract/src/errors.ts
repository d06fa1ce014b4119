import { z } from "zod";

export const errorResponseSchema = z
  .object({
    error: z.string().meta({ description: "Error message." }),
    code: z.string().optional().meta({ description: "Machine-readable error kind." }),
  })
  .meta({ id: "ErrorResponse" });
export type ErrorResponse = z.infer<typeof errorResponseSchema>;

/** Error kinds shared by server and clients; the transport maps each to one HTTP status. */
export const errorCodes = [
  "invalid",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "conflict",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "unavailable",
  "internal",
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export const httpStatusByErrorCode: Record<ErrorCode, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};
