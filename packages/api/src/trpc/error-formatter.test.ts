import { expect, test } from "bun:test";
import { PromptrunError, rateLimited } from "@promptrun/core";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { formatTrpcError, isUnexpectedError } from "./error-formatter.ts";

const wrap = (cause: unknown) => new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause });

test("a PromptrunError keeps its message and maps its code and status through the shared tables", () => {
  const shape = formatTrpcError({
    error: wrap(rateLimited("slow down", 2.5)),
    path: "run.create",
    defaultHttpStatus: 500,
  });
  expect(shape).toEqual({
    message: "slow down",
    code: -32029,
    data: {
      code: "TOO_MANY_REQUESTS",
      httpStatus: 429,
      errorCode: "rate_limited",
      path: "run.create",
      retryAfterSeconds: 2.5,
    },
  });
  expect(isUnexpectedError(wrap(new PromptrunError("conflict", "already ended")))).toBe(false);
});

test("input validation errors read like the REST messages", () => {
  const parsed = z
    .object({ slug: z.string(), extra: z.never().optional() })
    .strict()
    .safeParse({ slug: 1, other: 2 });
  const error = new TRPCError({ code: "BAD_REQUEST", cause: parsed.error });
  const shape = formatTrpcError({ error, defaultHttpStatus: 400 });
  expect(shape.data).toEqual({ code: "BAD_REQUEST", httpStatus: 400, errorCode: "invalid" });
  expect(shape.message).toContain("slug: expected string");
  expect(shape.message).toContain("unknown field 'other'");
});

test("unexpected errors are hidden behind a generic message", () => {
  const error = wrap(new Error("connection string postgres://user:pw@db"));
  expect(isUnexpectedError(error)).toBe(true);
  const shape = formatTrpcError({ error, defaultHttpStatus: 500 });
  expect(shape.message).toBe("internal server error");
  expect(JSON.stringify(shape)).not.toContain("postgres");
  expect(shape.data).toEqual({ code: "INTERNAL_SERVER_ERROR", httpStatus: 500, errorCode: "internal" });
});

test("tRPC's own errors keep their code; ones without a domain kind keep tRPC's status", () => {
  const notFound = formatTrpcError({
    error: new TRPCError({ code: "NOT_FOUND", message: 'No procedure found on path "x"' }),
    defaultHttpStatus: 404,
  });
  expect(notFound.data).toEqual({ code: "NOT_FOUND", httpStatus: 404, errorCode: "not_found" });
  const notImplemented = formatTrpcError({
    error: new TRPCError({ code: "NOT_IMPLEMENTED", message: "later" }),
    defaultHttpStatus: 501,
  });
  expect(notImplemented.data).toEqual({ code: "NOT_IMPLEMENTED", httpStatus: 501, errorCode: "internal" });
  expect(notImplemented.message).toBe("later");
});
