import { describe, expect, test } from "bun:test";
import { toStoreFilter, usageRange } from "./run-list-filters.ts";

const now = new Date("2026-05-20T15:30:00Z");

describe("usageRange", () => {
  test("default: the last 30 UTC days, today included", () => {
    expect(usageRange({}, now)).toEqual({
      from: new Date("2026-04-21T00:00:00Z"),
      to: new Date("2026-05-21T00:00:00Z"),
    });
  });

  test("dates are UTC days; date-times keep their instant; one end given puts the other 30 days away", () => {
    expect(usageRange({ from: "2026-01-01", to: "2026-01-02T12:00:00+02:00" }, now)).toEqual({
      from: new Date("2026-01-01T00:00:00Z"),
      to: new Date("2026-01-02T10:00:00Z"),
    });
    expect(usageRange({ from: "2026-01-01" }, now).to).toEqual(new Date("2026-01-31T00:00:00Z"));
    expect(usageRange({ to: "2026-01-31" }, now).from).toEqual(new Date("2026-01-01T00:00:00Z"));
  });

  test("366 days at most; to after from", () => {
    expect(usageRange({ from: "2024-01-01", to: "2025-01-01" }, now).to).toEqual(
      new Date("2025-01-01T00:00:00Z"),
    );
    expect(() => usageRange({ from: "2024-01-01", to: "2025-01-02" }, now)).toThrow("at most 366 days");
    expect(() => usageRange({ from: "2026-01-01", to: "2026-01-01" }, now)).toThrow("after");
  });
});

describe("toStoreFilter", () => {
  test("maps names and dates; slug is another name of prompt; version needs a prompt", () => {
    expect(
      toStoreFilter({
        thread: "0190C8A0-0000-7000-8000-000000000001",
        prompt: "greet",
        version: 2,
        metadata: { a: "b" },
        createdAfter: "2026-01-01T00:00:00Z",
      }),
    ).toEqual({
      threadId: "0190c8a0-0000-7000-8000-000000000001",
      slug: "greet",
      version: 2,
      metadata: { a: "b" },
      createdAfter: new Date("2026-01-01T00:00:00Z"),
    });
    expect(toStoreFilter({ slug: "greet" })).toEqual({ slug: "greet" });
    expect(() => toStoreFilter({ version: 1 })).toThrow("version needs prompt");
  });
});
