import { describe, expect, test } from "bun:test";
import { PromptrunError } from "@promptrun/core";
import { decodeCursor, encodeCursor, pageFrom } from "./cursor.ts";

describe("cursor", () => {
  test("round-trips a sort key", () => {
    const cursor = encodeCursor([1_700_000_000_000, "run-id"]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, ["number", "string"])).toEqual([1_700_000_000_000, "run-id"]);
  });

  test("rejects garbage and keys of the wrong shape as invalid", () => {
    const wrongShape = encodeCursor(["a", "b"]);
    for (const cursor of ["%%%", "bm90IGpzb24", wrongShape]) {
      let caught: unknown;
      try {
        decodeCursor(cursor, ["number", "string"]);
      } catch (error) {
        caught = error;
      }
      expect(PromptrunError.isInstance(caught) && caught.code).toBe("invalid");
    }
  });

  test("pageFrom gives a cursor only when there is more", () => {
    expect(pageFrom([1, 2, 3], 2, (n) => [n])).toEqual({ items: [1, 2], nextCursor: encodeCursor([2]) });
    expect(pageFrom([1, 2], 2, (n) => [n])).toEqual({ items: [1, 2], nextCursor: null });
  });
});
