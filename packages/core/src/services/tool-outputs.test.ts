import { describe, expect, test } from "bun:test";
import { TOOL_RESULT_KEPT_BYTES } from "@promptrun/contract";
import { keptToolOutput } from "./tool-outputs.ts";

describe("keptToolOutput", () => {
  test("an output up to 64 KB is kept as it is, whatever its type", () => {
    const exact = "a".repeat(TOOL_RESULT_KEPT_BYTES);
    expect(keptToolOutput(exact)).toBe(exact);
    for (const value of [null, 0, false, [1, "two"], { nested: { ok: true } }, ""]) {
      expect(keptToolOutput(value)).toEqual(value);
    }
  });

  test("one byte more is cut to 64 KB in all, ending in …[truncated]", () => {
    const kept = keptToolOutput("a".repeat(TOOL_RESULT_KEPT_BYTES + 1)) as string;
    expect(Buffer.byteLength(kept)).toBe(TOOL_RESULT_KEPT_BYTES);
    expect(kept).toEndWith("a…[truncated]");
  });

  test("a cut never splits a character (4-byte emoji)", () => {
    const kept = keptToolOutput("😀".repeat(20_000)) as string;
    const text = kept.replace("…[truncated]", "");
    expect(text).toBe("😀".repeat(text.length / 2));
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(TOOL_RESULT_KEPT_BYTES);
    expect(Buffer.byteLength(kept)).toBeGreaterThan(TOOL_RESULT_KEPT_BYTES - 4);
  });

  test("a large JSON value is kept as its JSON text, cut", () => {
    const value = { items: Array.from({ length: 20_000 }, (_, index) => index) };
    expect(Buffer.byteLength(JSON.stringify(value))).toBeGreaterThan(TOOL_RESULT_KEPT_BYTES);
    const kept = keptToolOutput(value) as string;
    expect(typeof kept).toBe("string");
    expect(JSON.stringify(value).startsWith(kept.replace("…[truncated]", ""))).toBe(true);
  });
});
