import { type ErrorCode, errorCodes, errorResponseSchema, httpStatusByErrorCode } from "@promptrun/contract";

/** What kind of failure an {@link ApiError} is: an HTTP answer, or no answer at all. */
export type ApiErrorCode = ErrorCode | "network" | "timeout" | "invalid_response";

const codeByStatus = new Map<number, ErrorCode>(
  errorCodes.map((code) => [httpStatusByErrorCode[code], code] as const),
);

/**
 * An error answer from Promptrun (or a network failure on the way to it).
 * `status` is 0 when no HTTP answer arrived.
 */
export class ApiError extends Error {
  /** HTTP status, or 0 for a network failure. */
  readonly status: number;
  /** The server's error kind (`code` of the body), derived from the status when the body has none. */
  readonly code: ApiErrorCode;
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: number,
    code: ApiErrorCode,
    message: string,
    options?: { retryAfterSeconds?: number; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  /** True for failures worth retrying: rate limiting (429), server errors (5xx) and network failures. */
  get isRetryable(): boolean {
    return this.code === "network" || this.status === 429 || this.status >= 500;
  }

  /** Builds the error from a non-2xx response, reading its `{"error": …}` body when there is one. */
  static async fromResponse(response: Response): Promise<ApiError> {
    const text = await response.text().catch(() => "");
    let message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
    let bodyCode: string | undefined;
    try {
      const body = errorResponseSchema.safeParse(JSON.parse(text));
      if (body.success) {
        message = body.data.error;
        bodyCode = body.data.code;
      }
    } catch {
      // Not JSON (a proxy's HTML page, an empty body): keep the status line as the message.
    }
    const code = isErrorCode(bodyCode) ? bodyCode : (codeByStatus.get(response.status) ?? "internal");
    return new ApiError(response.status, code, message, {
      retryAfterSeconds: parseRetryAfter(response.headers.get("retry-after")),
    });
  }

  /** Wraps a failed `fetch` (connection refused, DNS, reset) as a retryable network error. */
  static network(cause: unknown): ApiError {
    const detail = cause instanceof Error ? cause.message : String(cause);
    return new ApiError(0, "network", `network error: ${detail}`, { cause });
  }

  /** True for ApiError values, across copies of this package. */
  static isInstance(value: unknown): value is ApiError {
    return (
      value instanceof ApiError || (value instanceof Error && value.name === "ApiError" && "status" in value)
    );
  }
}

function isErrorCode(value: string | undefined): value is ErrorCode {
  return value !== undefined && (errorCodes as readonly string[]).includes(value);
}

/** `Retry-After` is seconds or an HTTP date. */
function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
