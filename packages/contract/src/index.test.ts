import { describe, expect, test } from "bun:test";
import { createRunRequestSchema, envVarsSchema, isUuid, metadataSchema, slugSchema } from "./index.ts";

describe("createRunRequestSchema", () => {
  test("accepts the minimal body", () => {
    expect(createRunRequestSchema.parse({ inputs: {} })).toEqual({ inputs: {} });
  });
  test("rejects unknown top-level fields", () => {
    expect(createRunRequestSchema.safeParse({ inputs: {}, extra: 1 }).success).toBe(false);
  });
  test("rejects a non-uuid thread and an unknown priority", () => {
    expect(createRunRequestSchema.safeParse({ inputs: {}, thread: "abc" }).success).toBe(false);
    expect(createRunRequestSchema.safeParse({ inputs: {}, priority: "urgent" }).success).toBe(false);
  });
  test("accepts null thread and environment", () => {
    expect(createRunRequestSchema.safeParse({ inputs: {}, thread: null, environment: null }).success).toBe(
      true,
    );
  });
});

describe("envVarsSchema", () => {
  test("rules: keys, count, bytes, value type", () => {
    expect(envVarsSchema.safeParse({ API_KEY: "x" }).success).toBe(true);
    expect(envVarsSchema.safeParse({ lower: "x" }).error?.issues[0]?.message).toContain("UPPER_CASE");
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`K${i}`, "v"]));
    expect(envVarsSchema.safeParse(many).error?.issues[0]?.message).toContain("at most 50");
    expect(envVarsSchema.safeParse({ BIG: "x".repeat(65_536 - 3) }).success).toBe(true);
    expect(envVarsSchema.safeParse({ BIG: "x".repeat(65_536 - 2) }).error?.issues[0]?.message).toContain(
      "65536 bytes",
    );
    expect(envVarsSchema.safeParse({ NUM: 1 }).error?.issues[0]?.message).toContain("strings");
    // UTF-8 bytes, not UTF-16 code units.
    expect(envVarsSchema.safeParse({ E: "é".repeat(32_768) }).success).toBe(false);
  });
});

describe("metadataSchema", () => {
  test("strings and arrays of strings only", () => {
    expect(metadataSchema.safeParse({ a: "b", c: ["d"] }).success).toBe(true);
    expect(metadataSchema.safeParse({ a: 1 }).success).toBe(false);
    expect(metadataSchema.safeParse({ a: "x".repeat(1001) }).success).toBe(false);
    expect(metadataSchema.safeParse({ ["k".repeat(65)]: "v" }).success).toBe(false);
  });
});

test("slug and uuid", () => {
  expect(slugSchema.safeParse("../etc/passwd").success).toBe(false);
  expect(slugSchema.safeParse("greet").success).toBe(true);
  expect(isUuid("0196f3c1-1f0e-7a3b-8b7c-1234567890ab")).toBe(true);
  expect(isUuid("nope")).toBe(false);
});
