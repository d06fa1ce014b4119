import { describe, expect, test } from "bun:test";
import { ApiError } from "./api-error.ts";

describe("ApiError.fromResponse", () => {
  test("reads the error body and its code", async () => {
    const error = await ApiError.fromResponse(
      Response.json({ error: "unknown prompt 'nope'", code: "not_found" }, { status: 404 }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(404);
    expect(error.code).toBe("not_found");
    expect(error.message).toBe("unknown prompt 'nope'");
    expect(error.isRetryable).toBe(false);
  });

  test("derives the code from the status when the body has none, and keeps Retry-After", async () => {
    const error = await ApiError.fromResponse(
      Response.json({ error: "slow down" }, { status: 429, headers: { "retry-after": "7" } }),
    );
    expect(error.code).toBe("rate_limited");
    expect(error.retryAfterSeconds).toBe(7);
    expect(error.isRetryable).toBe(true);
  });

  test("a non-JSON 502 from a proxy is a retryable error with the status line as message", async () => {
    const error = await ApiError.fromResponse(
      new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway" }),
    );
    expect(error.status).toBe(502);
    expect(error.code).toBe("internal");
    expect(error.message).toBe("HTTP 502 Bad Gateway");
    expect(error.isRetryable).toBe(true);
  });

  test("network failures are retryable, timeouts and contract mismatches are not", () => {
    expect(ApiError.network(new Error("ECONNREFUSED")).isRetryable).toBe(true);
    expect(new ApiError(0, "timeout", "still pending").isRetryable).toBe(false);
    expect(new ApiError(200, "invalid_response", "bad shape").isRetryable).toBe(false);
    expect(ApiError.isInstance(new Error("x"))).toBe(false);
  });
});
