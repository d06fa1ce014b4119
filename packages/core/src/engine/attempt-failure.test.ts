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
