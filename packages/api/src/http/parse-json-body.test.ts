import { expect, test } from "bun:test";
import { PromptrunError } from "@promptrun/core";
import { parseJsonBody } from "./parse-json-body.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const failure = (input: Uint8Array, depth = 64) => {
  try {
    parseJsonBody(input, depth);
    return null;
  } catch (error) {
    return PromptrunError.isInstance(error) ? { code: error.code, message: error.message } : null;
  }
};

test("parses JSON, a leading BOM included", () => {
  expect(parseJsonBody(bytes('{"inputs":{"a":1}}'), 64)).toEqual({ inputs: { a: 1 } });
  expect(parseJsonBody(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("{}")]), 64)).toEqual({});
});

test("empty, invalid, non-UTF-8 and too deep bodies are 400 (invalid)", () => {
  expect(failure(bytes(""))).toMatchObject({
    code: "invalid",
    message: "request body must be a JSON object",
  });
  expect(failure(bytes("  \n"))).toMatchObject({ code: "invalid" });
  expect(failure(bytes("{inputs:1}"))).toMatchObject({
    code: "invalid",
    message: "request body is not valid JSON",
  });
  expect(failure(new Uint8Array([0x7b, 0xff, 0x7d]))).toMatchObject({ code: "invalid" });
  expect(failure(bytes(`${"[".repeat(10_000)}${"]".repeat(10_000)}`))).toMatchObject({
    code: "invalid",
    message: "request body nests deeper than 64 levels",
  });
});

test("lone surrogate escapes are refused; escaped pairs and real characters are fine", () => {
  expect(failure(bytes('{"inputs":{"name":"\\ud800"}}'))).toMatchObject({ code: "invalid" });
  expect(failure(bytes('{"inputs":{"\\udc00":"x"}}'))).toMatchObject({ code: "invalid" });
  expect(failure(bytes('["a\\ud800b"]'))).toMatchObject({ code: "invalid" });
  expect(parseJsonBody(bytes('{"name":"\\ud83d\\ude80 \uFFFD"}'), 64)).toEqual({ name: "🚀 \uFFFD" });
  expect(parseJsonBody(bytes('{"path":"C:\\\\udir"}'), 64)).toEqual({ path: "C:\\udir" });
});
