import { describe, expect, test } from "bun:test";
import { answerToolCall } from "./web/client-tools.ts";

describe("the page's client tool", () => {
  test("answerToolCall: a known order with the browser's clock, an unknown one, an unknown tool", () => {
    const now = new Date("2026-05-03T10:00:00Z");
    expect(
      answerToolCall({ id: "c", name: "lookup_order", arguments: { number: "a-1001" } }, now),
    ).toMatchObject({
      number: "A-1001",
      item: "Espresso machine",
      status: "shipped",
      checkedAt: expect.stringContaining("03/05/2026"),
    });
    expect(
      answerToolCall({ id: "c", name: "lookup_order", arguments: { number: "Z-9" } }, now),
    ).toMatchObject({
      number: "Z-9",
      error: "no such order",
    });
    expect(() => answerToolCall({ id: "c", name: "delete_everything", arguments: {} })).toThrow(
      "this page has no tool named delete_everything",
    );
  });
});
