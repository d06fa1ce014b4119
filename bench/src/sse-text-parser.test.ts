import { expect, test } from "bun:test";
import { SseTextParser } from "./sse-text-parser.ts";

test("parses events across arbitrary splits, skipping comments and ids", () => {
  const events: Array<[string, string]> = [];
  const parser = new SseTextParser((event, data) => events.push([event, data]));
  const text =
    'id: 1\nevent: ready\ndata: {"a":1}\n\n: ping\n\nevent: run.token\r\ndata: x\r\ndata: y\r\n\r\ndata: plain\n\n';
  for (let index = 0; index < text.length; index += 3) parser.feed(text.slice(index, index + 3));
  expect(events).toEqual([
    ["ready", '{"a":1}'],
    ["run.token", "x\ny"],
    ["message", "plain"],
  ]);
});

test("an event without its blank line is not dispatched yet", () => {
  const events: string[] = [];
  const parser = new SseTextParser((event) => events.push(event));
  parser.feed("event: a\ndata: 1\n");
  expect(events).toEqual([]);
  parser.feed("\n");
  expect(events).toEqual(["a"]);
});
