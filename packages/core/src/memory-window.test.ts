import { describe, expect, test } from "bun:test";
import {
  DEFAULT_MEMORY_BOUND,
  estimateMessageTokens,
  memoryMessageOf,
  memoryWindowOf,
  promptMessageOfMemory,
  runMemoryBound,
} from "./memory-window.ts";

const server = DEFAULT_MEMORY_BOUND;
const own = [
  { content: "You are terse." }, // 14 bytes: 4 tokens
  {
    content: [
      { type: "text" as const, text: "look" },
      { type: "image" as const, image: "https://x/y.png" },
    ],
  },
];

describe("runMemoryBound", () => {
  test("the prompt's memory narrows the server's bound, never widens it", () => {
    expect(runMemoryBound(server, { provider: "dev", memory: { maxMessages: 20 } }, own)).toEqual({
      maxMessages: 20,
      maxBytes: server.maxBytes,
    });
    expect(runMemoryBound(server, { provider: "dev", memory: { maxMessages: 5_000 } }, own).maxMessages).toBe(
      1_000,
    );
    expect(
      runMemoryBound(
        { ...server, maxTokens: 100 },
        { provider: "dev", memory: { maxInputTokens: 500 } },
        own,
      ),
    ).toMatchObject({ maxTokens: 100 });
  });

  test("without memory.maxInputTokens: the provider's default context minus the own messages and output", () => {
    // Own messages: 4 + 1 ("look"; the image part is not estimated).
    expect(runMemoryBound(server, { provider: "openai" }, own).maxTokens).toBe(128_000 - 5);
    expect(runMemoryBound(server, { provider: "anthropic", maxOutputTokens: 1_000 }, own).maxTokens).toBe(
      200_000 - 5 - 1_000,
    );
    expect(runMemoryBound(server, { provider: "ollama" }, own).maxTokens).toBe(32_768 - 5);
    expect(runMemoryBound(server, { provider: "dev" }, own)).not.toHaveProperty("maxTokens");
    // An explicit limit is the prompt's own word, even above the default context.
    expect(
      runMemoryBound(server, { provider: "openai", memory: { maxInputTokens: 900_000 } }, own).maxTokens,
    ).toBe(900_000);
    // Own messages larger than the context leave no room, not a negative one.
    expect(runMemoryBound(server, { provider: "ollama" }, [{ content: "x".repeat(200_000) }]).maxTokens).toBe(
      0,
    );
  });
});

test("estimates: ceil(UTF-8 bytes / 4) of the text; parts round-trip through memory rows", () => {
  expect(estimateMessageTokens({ content: "é" })).toBe(1);
  expect(estimateMessageTokens({ content: "12345" })).toBe(2);
  const parts = own[1]!.content as Exclude<(typeof own)[1]["content"], string>;
  const row = memoryMessageOf({ role: "user", content: [{ type: "text", text: "a" }, ...parts] });
  expect(row).toEqual({ role: "user", content: "a\nlook", parts: [{ type: "text", text: "a" }, ...parts] });
  expect(promptMessageOfMemory(row)).toEqual({ role: "user", content: row.parts! });
  expect(promptMessageOfMemory({ role: "assistant", content: "hi" })).toEqual({
    role: "assistant",
    content: "hi",
  });
});

test("memoryWindowOf: a run's exchange is one unit; each imported message (no run) is its own", () => {
  // Newest first: an exchange of run r2, then three imported messages, then run r1's exchange.
  const rows = [
    { seq: 7, runId: "r2", bytes: 1 },
    { seq: 6, runId: "r2", bytes: 1 },
    { seq: 5, runId: null, bytes: 1 },
    { seq: 4, runId: null, bytes: 1 },
    { seq: 3, runId: null, bytes: 1 },
    { seq: 2, runId: "r1", bytes: 1 },
    { seq: 1, runId: "r1", bytes: 1 },
  ];
  const bound = (maxMessages: number) => ({ maxMessages, maxBytes: 1_000 });
  expect(memoryWindowOf(rows, bound(1))).toEqual({ start: null, messages: 0 });
  expect(memoryWindowOf(rows, bound(2))).toEqual({ start: 6, messages: 2 });
  // Imported messages are kept one by one, so the window can stop between two of them.
  expect(memoryWindowOf(rows, bound(3))).toEqual({ start: 5, messages: 3 });
  expect(memoryWindowOf(rows, bound(4))).toEqual({ start: 4, messages: 4 });
  expect(memoryWindowOf(rows, bound(6))).toEqual({ start: 3, messages: 5 });
  expect(memoryWindowOf(rows, bound(7))).toEqual({ start: 1, messages: 7 });
});
