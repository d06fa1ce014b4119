import { APICallError } from "@ai-sdk/provider";
import { PromptrunError } from "../errors.ts";
import { parseRetryAfter } from "./backoff.ts";
import { RunInterruption } from "./run-interruption.ts";

/** For metrics: why an attempt failed. */
export type FailureReason =
  | "rate_limited"
  | "server_error"
  | "client_error"
  | "network"
  | "stream_interrupted"
  | "idle_timeout"
  | "attempt_timeout"
  | "configuration"
  | "response_too_large"
  | "context_length"
  | "unknown";

export interface AttemptFailure {
  retryable: boolean;
  /** Safe to store and show: provider status and message, credentials redacted. */
  message: string;
  reason: FailureReason;
  retryAfterMs: number | null;
}

/** 4xx means "this request will never work" except timeouts, conflicts, too-early and rate limits. */
const TRANSIENT_CLIENT_STATUSES = new Set([408, 409, 425, 429]);

const KEY_LIKE = /\b(sk|pk|rk|key|sess)[-_][A-Za-z0-9_\-*.]{6,}/g;

/** Removes the credentials in use, and anything shaped like a key, from a message. */
export function redact(message: string, secrets: string[]): string {
  let safe = message;
  for (const secret of secrets) if (secret.length >= 4) safe = safe.split(secret).join("[redacted]");
  return safe.replace(KEY_LIKE, "[redacted]");
}

const findInCauses = <T>(error: unknown, match: (value: unknown) => value is T): T | null => {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (match(current)) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return null;
};

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * A provider saying the prompt does not fit the model's context: OpenAI's (and vLLM's)
 * `context_length_exceeded` / "maximum context length", Anthropic's "prompt is too long".
 */
const CONTEXT_LENGTH_ERROR = /context_length_exceeded|maximum context length|prompt is too long/i;
/** Of a provider's error text, this much is searched (bodies are capped, but may be large). */
const SEARCHED_ERROR_CHARS = 16_384;

const textsOf = (error: unknown): string[] => {
  if (APICallError.isInstance(error)) return [error.message, error.responseBody ?? ""];
  if (error instanceof Error) return [error.message];
  try {
    return [typeof error === "string" ? error : (JSON.stringify(error) ?? "")];
  } catch {
    return [];
  }
};

/** The model named by the failed request, for the context-length message. */
const requestedModel = (error: unknown): string | null => {
  const apiError = findInCauses(error, APICallError.isInstance);
  const body = apiError?.requestBodyValues;
  const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof model === "string" && model !== "" ? model : null;
};

/** The run's error when the conversation outgrew the model's context; null for any other error. */
function contextLengthMessage(error: unknown, provider: string, model?: string): string | null {
  let current: unknown = error;
  let found = false;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null && !found; depth++) {
    found = textsOf(current).some((text) => CONTEXT_LENGTH_ERROR.test(text.slice(0, SEARCHED_ERROR_CHARS)));
    current = current instanceof Error ? current.cause : undefined;
  }
  if (!found) return null;
  const modelId = model ?? requestedModel(error);
  const name = modelId === null ? provider : `${provider}:${modelId}`;
  return `the conversation is longer than ${name}'s context window; set memory.maxMessages or memory.maxInputTokens in the prompt`;
}

const describeApiCallError = (provider: string, error: APICallError): string => {
  const cause =
    error.cause instanceof Error && error.cause.message !== error.message ? error.cause.message : "";
  const status = error.statusCode;
  if (status !== undefined && status >= 400) return `${provider} returned ${status}: ${error.message}`;
  return `${provider} call failed: ${error.message}${cause ? ` (${cause})` : ""}`;
};

/** Sorts an attempt's error into retryable or not, with a message fit for the run's `error`. */
export function classifyAttemptError(
  error: unknown,
  context: {
    provider: string;
    secrets: string[];
    now: Date;
    idleTimeoutMs: number;
    attemptTimeoutMs: number;
    maxOutputBytes?: number;
    /** The model id, for the context-length message (else the request body's `model`). */
    model?: string;
  },
): AttemptFailure {
  const { provider } = context;
  const finish = (
    retryable: boolean,
    reason: FailureReason,
    message: string,
    retryAfterMs: number | null = null,
  ) => ({
    retryable,
    reason,
    message: redact(message, context.secrets),
    retryAfterMs,
  });

  const interruption = findInCauses(
    error,
    (value): value is RunInterruption => value instanceof RunInterruption,
  );
  if (interruption?.kind === "idle") {
    return finish(
      true,
      "idle_timeout",
      `${provider} sent nothing for ${context.idleTimeoutMs} ms (idle timeout)`,
    );
  }
  if (interruption?.kind === "timeout") {
    return finish(true, "attempt_timeout", `${provider} call timed out after ${context.attemptTimeoutMs} ms`);
  }

  if (interruption?.kind === "output_limit") {
    return finish(false, "response_too_large", `${provider} output passed ${context.maxOutputBytes} bytes`);
  }

  // Our own refusals (a tenant URL on a private range, a response past its caps…) surface
  // through the provider's fetch; retrying would only repeat them.
  const refusal = findInCauses(error, PromptrunError.isInstance);
  if (refusal?.code === "payload_too_large")
    return finish(false, "response_too_large", `${provider} ${refusal.message}`);
  if (refusal) return finish(false, "configuration", refusal.message);

  // Retrying the same conversation would fail the same way: say what to change instead.
  const tooLong = contextLengthMessage(error, provider, context.model);
  if (tooLong !== null) return finish(false, "context_length", tooLong);

  const apiError = findInCauses(error, APICallError.isInstance);
  if (apiError) {
    const status = apiError.statusCode;
    const message = describeApiCallError(provider, apiError);
    const retryAfterMs = parseRetryAfter(apiError.responseHeaders, context.now);
    if (status === 429) return finish(true, "rate_limited", message, retryAfterMs);
    if (status !== undefined && status >= 500) return finish(true, "server_error", message, retryAfterMs);
    if (status !== undefined && status >= 400) {
      const transient = TRANSIENT_CLIENT_STATUSES.has(status);
      return finish(transient, transient ? "server_error" : "client_error", message, retryAfterMs);
    }
    if (status !== undefined && status < 300) return finish(true, "stream_interrupted", message);
    return finish(true, "network", message);
  }
  return finish(true, "unknown", `${provider} call failed: ${messageOf(error)}`);
}
