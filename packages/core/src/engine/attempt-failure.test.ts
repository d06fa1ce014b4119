import { describe, expect, test } from "bun:test";
import { APICallError } from "@ai-sdk/provider";
import { invalid } from "../errors.ts";
import { classifyAttemptError, redact } from "./attempt-failure.ts";
import { parseRetryAfter, retryDelayMs } from "./backoff.ts";
import { RunInterruption } from "./run-interruption.ts";

const now = new Date("2030-01-01T00:00:00Z");
const context = {
  provider: "openai",
  secrets: ["sk-live-abcdef123456"],
  now,
  idleTimeoutMs: 1000,
  attemptTimeoutMs: 5000,
};
const apiError = (
  statusCode: number | undefined,
  message = "boom",
  responseHeaders?: Record<string, string>,
) =>
  new APICallError({
    message,
    url: "https://api.example/v1",
    requestBodyValues: {},
    statusCode,
    responseHeaders,
  });

describe("classifyAttemptError", () => {
  test("429, 408, 409 and 5xx are transient; other 4xx are not", () => {
    expect(classifyAttemptError(apiError(429), context)).toMatchObject({
      retryable: true,
      reason: "rate_limited",
    });
    for (const status of [408, 409, 500, 502, 503, 529]) {
      expect(classifyAttemptError(apiError(status), context).retryable).toBe(true);
    }
    for (const status of [400, 401, 403, 404, 422]) {
      expect(classifyAttemptError(apiError(status), context)).toMatchObject({
        retryable: false,
        reason: "client_error",
      });
    }
  });

  test("messages carry the status and the provider's words, never a key", () => {
    const failure = classifyAttemptError(
      apiError(401, "Incorrect API key provided: sk-live-abcdef123456"),
      context,
    );
    expect(failure.message).toBe("openai returned 401: Incorrect API key provided: [redacted]");
    expect(redact("token sk-proj-AbC123xyz789 leaked", [])).toBe("token [redacted] leaked");
  });

  test("network errors and broken streams are transient", () => {
    expect(classifyAttemptError(apiError(undefined, "Cannot connect to API"), context)).toMatchObject({
      retryable: true,
      reason: "network",
    });
    expect(
      classifyAttemptError(apiError(200, "Failed to process successful response"), context),
    ).toMatchObject({
      retryable: true,
      reason: "stream_interrupted",
    });
    expect(classifyAttemptError(new TypeError("socket hang up"), context).retryable).toBe(true);
  });

  test("timeouts are transient with a clear message; our own refusals are final", () => {
    expect(classifyAttemptError(new RunInterruption("idle"), context)).toMatchObject({
      retryable: true,
      message: "openai sent nothing for 1000 ms (idle timeout)",
    });
    expect(classifyAttemptError(new RunInterruption("timeout"), context).message).toBe(
      "openai call timed out after 5000 ms",
    );
    const refused = new Error("fetch failed", {
      cause: invalid("OPENAI_BASE_URL resolves to a private address"),
    });
    expect(classifyAttemptError(refused, context)).toMatchObject({
      retryable: false,
      reason: "configuration",
    });
  });

  test("Retry-After in seconds or as an HTTP date, from the error's headers", () => {
    expect(classifyAttemptError(apiError(429, "slow", { "Retry-After": "7" }), context).retryAfterMs).toBe(
      7000,
    );
    expect(parseRetryAfter({ "retry-after": new Date(now.getTime() + 3000).toUTCString() }, now)).toBe(3000);
    expect(parseRetryAfter({ "retry-after-ms": "250" }, now)).toBe(250);
    expect(parseRetryAfter({ "retry-after": "soon" }, now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe("context-length errors", () => {
  const tooLong = (model: string) =>
    `the conversation is longer than ${model}'s context window; set memory.maxMessages or memory.maxInputTokens in the prompt`;
  const providerError = (
    statusCode: number,
    body: unknown,
    message: string,
    requestBodyValues: unknown = { model: "gpt-4o" },
  ) =>
    new APICallError({
      message,
      url: "https://api.example/v1/chat/completions",
      requestBodyValues,
      statusCode,
      responseBody: JSON.stringify(body),
      data: body,
    });

  test("OpenAI's context_length_exceeded is final, with a message that says what to change", () => {
    const message =
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.";
    const body = { error: { message, type: "invalid_request_error", code: "context_length_exceeded" } };
    expect(classifyAttemptError(providerError(400, body, message), context)).toEqual({
      retryable: false,
      reason: "context_length",
      message: tooLong("openai:gpt-4o"),
      retryAfterMs: null,
    });
    // Only the code (in the body) says so, and the failure came as a 5xx stream frame: still final.
    const coded = { error: { message: "Bad request", code: "context_length_exceeded" } };
    expect(classifyAttemptError(providerError(500, coded, "Bad request"), context)).toMatchObject({
      retryable: false,
      reason: "context_length",
    });
  });

  test("Anthropic's 'prompt is too long' names the model; a model given by the caller wins", () => {
    const message = "prompt is too long: 210123 tokens > 200000 maximum";
    const body = { type: "error", error: { type: "invalid_request_error", message } };
    const error = providerError(400, body, message, { model: "claude-sonnet-4-5" });
    const anthropic = { ...context, provider: "anthropic" };
    expect(classifyAttemptError(error, anthropic)).toMatchObject({
      retryable: false,
      message: tooLong("anthropic:claude-sonnet-4-5"),
    });
    expect(classifyAttemptError(error, { ...anthropic, model: "claude-opus-4" }).message).toBe(
      tooLong("anthropic:claude-opus-4"),
    );
    // Without a model anywhere, the provider stands in.
    expect(classifyAttemptError(providerError(400, body, message, {}), anthropic).message).toBe(
      tooLong("anthropic"),
    );
  });

  test("a context error inside another error's cause is found; other 400s stay client errors", () => {
    const wrapped = new Error("stream failed", {
      cause: new Error("This model's maximum context length is 4096 tokens."),
    });
    expect(classifyAttemptError(wrapped, context)).toMatchObject({
      retryable: false,
      reason: "context_length",
    });
    const other = providerError(
      400,
      { error: { message: "Invalid 'temperature'" } },
      "Invalid 'temperature'",
    );
    expect(classifyAttemptError(other, context)).toMatchObject({ retryable: false, reason: "client_error" });
  });
});

describe("retryDelayMs", () => {
  test("full jitter under an exponential ceiling capped at the maximum", () => {
    const delay = (retry: number, random: number) =>
      retryDelayMs({ retry, baseMs: 100, maxMs: 1000, retryAfterMs: null, random: () => random });
    expect(delay(0, 0.999)).toBe(99);
    expect(delay(2, 0.5)).toBe(200);
    expect(delay(10, 0.999)).toBe(999);
    expect(delay(3, 0)).toBe(0);
  });

  test("Retry-After is a floor", () => {
    expect(retryDelayMs({ retry: 0, baseMs: 100, maxMs: 1000, retryAfterMs: 5000, random: () => 0.5 })).toBe(
      5000,
    );
    expect(retryDelayMs({ retry: 5, baseMs: 100, maxMs: 1000, retryAfterMs: 10, random: () => 0.5 })).toBe(
      500,
    );
  });
});
