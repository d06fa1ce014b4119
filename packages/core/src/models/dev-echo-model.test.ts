import { describe, expect, test } from "bun:test";
import { streamText } from "ai";
import { createDevEchoModel, DEV_ECHO_MAX_CHARS, echoPieces } from "./dev-echo-model.ts";
import { emptyObservation, streamModelText } from "./stream-model-text.ts";

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

describe("dev:echo bounds its work", () => {
  const bigMessage = (bytes: number) => "word ".repeat(Math.ceil(bytes / 5)).slice(0, bytes);

  test("echoes at most DEV_ECHO_MAX_CHARS of the message, whole pieces", async () => {
    const { deltas, usage } = await collect({ messages: [{ role: "user", content: bigMessage(800_000) }] });
    const output = deltas.join("");
    expect(output.length).toBeLessThanOrEqual(DEV_ECHO_MAX_CHARS);
    expect(output.length).toBeGreaterThan(DEV_ECHO_MAX_CHARS - 10);
    expect(bigMessage(800_000).startsWith(output)).toBe(true);
    expect((usage as { inputTokens: number }).inputTokens).toBe(160_000);
  });

  test("40 streams of 800 KB messages never stall the event loop for long", async () => {
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const message = bigMessage(800_000);
    try {
      // The engine's own path (streamModelText → doStream), as a run takes it.
      const outputs = await Promise.all(
        Array.from({ length: 40 }, async () => {
          let output = "";
          const observation = emptyObservation();
          await streamModelText(
            createDevEchoModel(),
            {
              messages: [{ role: "user", content: message }],
              params: {},
              signal: new AbortController().signal,
              onActivity: () => {},
              onText: (delta) => {
                output += delta;
              },
            },
            observation,
          );
          expect(observation.finishReason).toBe("stop");
          return output;
        }),
      );
      for (const output of outputs) expect(output.length).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
      // The gap still open when the work ended counts too (a loop held throughout never ticks).
      longestGap = Math.max(longestGap, performance.now() - last);
    }
    // Generous: a loaded 2-core machine; unbounded echo of these held the loop for seconds.
    expect(longestGap).toBeLessThan(1_000);
  }, 60_000);
});

describe("dev:echo with an output schema", () => {
  const schema = {
    type: "object",
    properties: { reply: { type: "string", maxLength: 12 }, escalate: { type: "boolean" } },
    required: ["reply", "escalate"],
    additionalProperties: false,
  };

  test("streams JSON built from the schema; a text prompt still gets its echo", async () => {
    const run = async (output?: { format: "json_schema"; schema: Record<string, unknown> }) => {
      const texts: string[] = [];
      const observation = emptyObservation();
      await streamModelText(
        createDevEchoModel(),
        {
          messages: [{ role: "user", content: "please refund order 12" }],
          params: {},
          modelRef: "dev:echo",
          output,
          signal: new AbortController().signal,
          onActivity: () => {},
          onText: (delta) => texts.push(delta),
        },
        observation,
      );
      return { texts, observation };
    };
    const json = await run({ format: "json_schema", schema });
    expect(JSON.parse(json.texts.join(""))).toEqual({ reply: "please refun", escalate: true });
    expect(json.texts.length).toBeGreaterThan(1);
    expect(json.observation.reportedUsage?.outputTokens.total).toBe(json.texts.length);
    expect(json.observation.finishReason).toBe("stop");

    const text = await run();
    expect(text.texts).toEqual(["please ", "refund ", "order ", "12"]);
    expect(text.observation.reportedUsage?.outputTokens.total).toBe(4);
  });
});
