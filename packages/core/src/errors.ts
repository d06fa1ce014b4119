import type { ErrorCode } from "@promptrun/contract";

/** The only error kind the engine throws; transports map `code` to a status in one table. */
export class PromptrunError extends Error {
  readonly code: ErrorCode;
  /** Seconds a client should wait (rate limits). */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PromptrunError";
    this.code = code;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  static isInstance(value: unknown): value is PromptrunError {
    return value instanceof PromptrunError;
  }
}

export const notFound = (message: string) => new PromptrunError("not_found", message);
export const invalid = (message: string) => new PromptrunError("invalid", message);
export const unauthorized = (message = "missing or invalid API key") =>
  new PromptrunError("unauthorized", message);
export const forbidden = (message: string) => new PromptrunError("forbidden", message);
export const conflict = (message: string) => new PromptrunError("conflict", message);
export const rateLimited = (message: string, retryAfterSeconds: number) =>
  new PromptrunError("rate_limited", message, { retryAfterSeconds });

/** Why a valid stream token no longer grants access: also the reason of the stream's `end` event. */
export type StreamAccessLoss = "tenant_inactive" | "key_revoked";

/** A stream token that verifies but whose tenant was deactivated or whose minting key was revoked. */
export class StreamAccessError extends PromptrunError {
  constructor(readonly loss: StreamAccessLoss) {
    super(
      loss === "tenant_inactive" ? "forbidden" : "unauthorized",
      loss === "tenant_inactive"
        ? "no active subscription"
        : "the API key that minted this stream token has been revoked",
    );
  }
}
