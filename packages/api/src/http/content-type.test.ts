import { expect, test } from "bun:test";
import { isJsonContentType } from "./content-type.ts";

test("application/json with any parameters, case-insensitive", () => {
  expect(isJsonContentType("application/json")).toBe(true);
  expect(isJsonContentType("Application/JSON; charset=UTF-8")).toBe(true);
  expect(isJsonContentType("application/json;charset=latin1")).toBe(true);
  expect(isJsonContentType(" application/json ")).toBe(true);
});

test("missing, other or look-alike media types are refused", () => {
  expect(isJsonContentType(null)).toBe(false);
  expect(isJsonContentType("")).toBe(false);
  expect(isJsonContentType("text/plain")).toBe(false);
  expect(isJsonContentType("application/jsonx")).toBe(false);
  expect(isJsonContentType("application/merge-patch+json")).toBe(false);
  expect(isJsonContentType("text/plain; x=application/json")).toBe(false);
});
