import { describe, expect, test } from "bun:test";
import { TOOL_RESULT_KEPT_BYTES } from "@promptrun/contract";
import { keptToolOutput } from "./index.ts";

const bytes = (text: string) => Buffer.byteLength(text);

describe("keptToolOutput", () => {
  test("an output within 64 KB is kept as it is", () => {
    const value = { rows: [1, 2, 3], note: "ok" };
    expect(keptToolOutput(value)).toBe(value);
    expect(keptToolOutput("short")).toBe("short");
    expect(keptToolOutput(null)).toBeNull();
    const exact = "a".repeat(TOOL_RESULT_KEPT_BYTES);
    expect(keptToolOutput(exact)).toBe(exact);
  });

  test("a longer string is cut to 64 KB, the mark included", () => {
    const kept = keptToolOutput("a".repeat(TOOL_RESULT_KEPT_BYTES + 1)) as string;
    expect(kept.endsWith("…[truncated]")).toBe(true);
    expect(bytes(kept)).toBe(TOOL_RESULT_KEPT_BYTES);
    expect(kept.startsWith("a".repeat(60_000))).toBe(true);
  });

  test("a cut never splits a character", () => {
    const kept = keptToolOutput("é€😀".repeat(20_000)) as string;
    expect(bytes(kept)).toBeLessThanOrEqual(TOOL_RESULT_KEPT_BYTES);
    expect(bytes(kept)).toBeGreaterThan(TOOL_RESULT_KEPT_BYTES - 8);
    expect(kept).not.toContain("\uFFFD");
    expect(kept.endsWith("…[truncated]")).toBe(true);
  });

  test("a JSON value over 64 KB becomes its JSON text, cut", () => {
    const rows = Array.from({ length: 10_000 }, (_, index) => ({ index, name: `row ${index}` }));
    const kept = keptToolOutput({ rows }) as string;
    expect(typeof kept).toBe("string");
    expect(kept.startsWith('{"rows":[{"index":0,"name":"row 0"}')).toBe(true);
    expect(kept.endsWith("…[truncated]")).toBe(true);
    expect(bytes(kept)).toBeLessThanOrEqual(TOOL_RESULT_KEPT_BYTES);
  });
});
