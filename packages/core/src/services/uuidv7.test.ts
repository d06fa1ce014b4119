import { describe, expect, test } from "bun:test";
import { isUuid } from "@promptrun/contract";
import { uuidv7, uuidv7Time } from "./uuidv7.ts";

describe("uuidv7", () => {
  test("is a version 7, variant 10 UUID carrying its time", () => {
    const id = uuidv7(Date.UTC(2030, 0, 1));
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe("7");
    expect(["8", "9", "a", "b"]).toContain(id[19]!);
    expect(uuidv7Time(id).toISOString()).toBe("2030-01-01T00:00:00.000Z");
  });

  test("sorts in creation order, even thousands within one millisecond and with a clock going back", () => {
    const base = Date.UTC(2031, 0, 1);
    const ids = Array.from({ length: 10_000 }, (_, index) => uuidv7(index === 5_000 ? base - 1_000 : base));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
