import { expect, test } from "bun:test";
import type { DeliveredThreadEvent } from "@promptrun/core";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { encodeDeliveredEvent, encodeSseMessage, isSafeEventId, pingComment } from "./encode.ts";

const RUN_ID = "0196f3c1-1f0e-7a3b-8b7c-1234567890ab";

function parse(chunks: Uint8Array[]): { messages: EventSourceMessage[]; comments: string[] } {
  const messages: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (message) => messages.push(message),
    onComment: (c) => comments.push(c),
  });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  return { messages, comments };
}

test("an SSE message is id, event and one JSON data line, even with newlines in the data", () => {
  const delta = 'line one\nline two\r\n"quoted"';
  const bytes = encodeSseMessage("42", {
    type: "run.token",
    data: { runId: RUN_ID, channel: "default", index: 0, delta },
  });
  const { messages } = parse([bytes]);
  expect(messages).toEqual([
    {
      id: "42",
      event: "run.token",
      data: JSON.stringify({ runId: RUN_ID, channel: "default", index: 0, delta }),
    },
  ]);
  expect(
    new TextDecoder()
      .decode(bytes)
      .split("\n")
      .filter((line) => line.startsWith("data:")),
  ).toHaveLength(1);
});

test("a delivered event is encoded once and the same bytes are reused", () => {
  const delivered: DeliveredThreadEvent = {
    id: "7",
    event: { type: "run.token", data: { runId: RUN_ID, channel: "default", index: 3, delta: "hi" } },
  };
  const first = encodeDeliveredEvent(delivered);
  expect(encodeDeliveredEvent(delivered)).toBe(first);
  // An equal but distinct object is a different event.
  expect(encodeDeliveredEvent({ ...delivered })).not.toBe(first);
  expect(parse([first]).messages[0]?.id).toBe("7");
});

test("ping is a comment, and unsafe ids are refused", () => {
  expect(parse([pingComment])).toEqual({ messages: [], comments: ["ping"] });
  expect(isSafeEventId("123")).toBe(true);
  expect(isSafeEventId("1\n2")).toBe(false);
  expect(isSafeEventId("x".repeat(201))).toBe(false);
});
