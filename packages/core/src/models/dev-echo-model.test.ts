import { describe, expect, test } from "bun:test";
import { streamText } from "ai";
import { createDevEchoModel, echoPieces } from "./dev-echo-model.ts";

const collect = async (options: {
  delayMs?: number;
  abortAfterPieces?: number;
  messages: Array<{ role: "system" | "user" | "assistant"; content: string }>;
}) => {
  const controller = new AbortController();
  const result = streamText({
    model: createDevEchoModel({ delayMs: options.delayMs }),
    messages: options.messages,
    allowSystemInMessages: true,
    maxRetries: 0,
    abortSignal: controller.signal,
    onError: () => {},
  });
  const deltas: string[] = [];
  const stamps: number[] = [];
  let usage: unknown = null;
  let aborted = false;
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") {
      deltas.push(part.text);
      stamps.push(performance.now());
      if (deltas.length === options.abortAfterPieces) controller.abort();
    } else if (part.type === "finish") usage = part.totalUsage;
    else if (part.type === "abort") aborted = true;
  }
  return { deltas, stamps, usage, aborted };
};

describe("dev:echo", () => {
  test("pieces concatenate to exactly the message, whitespace included", () => {
    for (const text of ["", "one", "  lead and trail  ", "tabs\tand\nnewlines", "   "]) {
      expect(echoPieces(text).join("")).toBe(text);
    }
    expect(echoPieces("  a b  c")).toEqual(["  ", "a ", "b  ", "c"]);
  });

  test("streams the last user message word by word and reports word counts", async () => {
    const { deltas, usage } = await collect({
      messages: [
        { role: "system", content: "be kind" },
        { role: "user", content: "first question" },
        { role: "assistant", content: "an answer" },
        { role: "user", content: "say  this back" },
      ],
    });
    expect(deltas).toEqual(["say  ", "this ", "back"]);
    expect(usage).toMatchObject({ inputTokens: 9, outputTokens: 3, totalTokens: 12 });
  });

  test("waits delayMs between words", async () => {
    const { stamps } = await collect({ delayMs: 40, messages: [{ role: "user", content: "a b c" }] });
    expect(stamps[2]! - stamps[0]!).toBeGreaterThanOrEqual(70);
  });

  test("honours the abort signal between words", async () => {
    const started = performance.now();
    const { deltas, aborted } = await collect({
      delayMs: 1_000,
      abortAfterPieces: 1,
      messages: [{ role: "user", content: "one two three four" }],
    });
    expect(deltas).toEqual(["one "]);
    expect(aborted).toBe(true);
    expect(performance.now() - started).toBeLessThan(900);
  });
});
