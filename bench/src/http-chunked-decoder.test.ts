import { expect, test } from "bun:test";
import { ChunkedDecoder } from "./http-chunked-decoder.ts";

const encoder = new TextEncoder();
const decodeAll = (decoder: ChunkedDecoder, parts: Uint8Array[]) =>
  parts.flatMap((part) => decoder.feed(part).map((piece) => new TextDecoder().decode(piece))).join("");

const body = encoder.encode("5\r\nhello\r\n7;ext=1\r\n, world\r\n1\r\n!\r\n0\r\n\r\n");

test("decodes a chunked body fed whole", () => {
  const decoder = new ChunkedDecoder();
  expect(decodeAll(decoder, [body])).toBe("hello, world!");
  expect(decoder.finished).toBe(true);
});

test("decodes the same body fed one byte at a time (splits inside sizes, data and CRLFs)", () => {
  const decoder = new ChunkedDecoder();
  const bytes = [...body].map((byte) => Uint8Array.of(byte));
  expect(decodeAll(decoder, bytes)).toBe("hello, world!");
  expect(decoder.finished).toBe(true);
});

test("is not finished before the terminating chunk and rejects a bad size", () => {
  const decoder = new ChunkedDecoder();
  expect(decodeAll(decoder, [encoder.encode("3\r\nabc\r\n")])).toBe("abc");
  expect(decoder.finished).toBe(false);
  expect(() => new ChunkedDecoder().feed(encoder.encode("zz\r\n"))).toThrow("malformed chunk size");
});
