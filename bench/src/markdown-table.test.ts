import { expect, test } from "bun:test";
import { formatAddedMs, formatCount, formatMs, formatPercent } from "./format.ts";
import { markdownTable } from "./markdown-table.ts";

test("renders a table with escaped cells", () => {
  expect(markdownTable(["a", "b"], [[1, "x|y"]])).toBe("| a | b |\n| --- | --- |\n| 1 | x\\|y |");
});

test("formats numbers for people, and missing values as n/a", () => {
  expect(formatMs(0.1234)).toBe("0.12");
  expect(formatMs(12.345)).toBe("12.3");
  expect(formatMs(1234.5)).toBe("1235");
  expect(formatCount(53123.7)).toBe("53,124");
  expect(formatPercent(0.3049)).toBe("30.5 %");
  expect(formatAddedMs(-0.4)).toBe("−0.40");
  expect(formatMs(Number.NaN)).toBe("n/a");
});
