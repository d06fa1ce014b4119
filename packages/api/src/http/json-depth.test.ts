import { expect, test } from "bun:test";
import { exceedsJsonDepth } from "./json-depth.ts";

test("counts object and array nesting outside strings", () => {
  expect(exceedsJsonDepth('{"a":[1,{"b":2}]}', 3)).toBe(false);
  expect(exceedsJsonDepth('{"a":[1,{"b":2}]}', 2)).toBe(true);
  expect(exceedsJsonDepth("1", 0)).toBe(false);
  expect(exceedsJsonDepth("[]", 0)).toBe(true);
});

test("brackets inside strings, escaped quotes included, do not count", () => {
  expect(exceedsJsonDepth('{"a":"[[[[{{{{"}', 1)).toBe(false);
  expect(exceedsJsonDepth('{"a":"\\"[[[[\\\\"}', 1)).toBe(false);
  expect(exceedsJsonDepth('{"a":"\\\\",  "b":[[1]]}', 2)).toBe(true);
});

test("10k-deep nesting is refused without recursion", () => {
  expect(exceedsJsonDepth(`${"[".repeat(10_000)}${"]".repeat(10_000)}`, 64)).toBe(true);
  expect(exceedsJsonDepth(`${"[".repeat(64)}${"]".repeat(64)}`, 64)).toBe(false);
});
