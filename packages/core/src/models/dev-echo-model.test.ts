import { describe, expect, test } from "bun:test";
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";
import { jsonSchema, stepCountIs, streamText, tool } from "ai";
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

describe("dev:echo with tools", () => {
  const lookupOrder: LanguageModelV4FunctionTool = {
    type: "function",
    name: "lookup_order",
    inputSchema: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
  };
  const streamParts = async (
    prompt: LanguageModelV4Prompt,
    options: Partial<LanguageModelV4CallOptions> = {},
  ): Promise<LanguageModelV4StreamPart[]> => {
    const { stream } = await createDevEchoModel().doStream({ prompt, tools: [lookupOrder], ...options });
    const parts: LanguageModelV4StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    return parts;
  };
  const user = (text: string): LanguageModelV4Prompt[number] => ({
    role: "user",
    content: [{ type: "text", text }],
  });
  const textOfParts = (parts: LanguageModelV4StreamPart[]) =>
    parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : []));
  const finishOf = (parts: LanguageModelV4StreamPart[]) =>
    parts.find((part) => part.type === "finish") as Extract<LanguageModelV4StreamPart, { type: "finish" }>;
  const exchange = (id: string, output: LanguageModelV4ToolResultOutput): LanguageModelV4Prompt => [
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: id, toolName: "lookup_order", input: { number: "A-1001" } }],
    },
    { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "lookup_order", output }] },
  ];

  test("a /call of an offered tool streams its input, then the tool-call part, and finishes with tool-calls", async () => {
    const parts = await streamParts([
      { role: "system", content: "You look orders up." },
      user('/call lookup_order {"number": "A-1001", "detail": {"lines": true}}'),
    ]);
    expect(parts.map((part) => part.type)).toEqual([
      "stream-start",
      "response-metadata",
      "tool-input-start",
      "tool-input-delta",
      "tool-input-delta",
      "tool-input-delta",
      "tool-input-end",
      "tool-call",
      "finish",
    ]);
    const input = '{"number":"A-1001","detail":{"lines":true}}';
    expect(
      parts
        .filter((part) => part.type === "tool-input-delta")
        .map((part) => part.delta)
        .join(""),
    ).toBe(input);
    expect(parts.find((part) => part.type === "tool-call")).toEqual({
      type: "tool-call",
      toolCallId: "call_1",
      toolName: "lookup_order",
      input,
    });
    const finish = finishOf(parts);
    expect(finish.finishReason).toEqual({ unified: "tool-calls", raw: "tool_calls" });
    expect(finish.usage.outputTokens.total).toBe(3);
    expect(finish.usage.inputTokens.total).toBe(4 + 7);
  });

  test("a long input streams in at most 256 pieces", async () => {
    const number = "x".repeat(100_000);
    const parts = await streamParts([user(`/call lookup_order {"number":"${number}"}`)]);
    const deltas = parts.filter((part) => part.type === "tool-input-delta").map((part) => part.delta);
    expect(deltas.length).toBeLessThanOrEqual(256);
    expect(deltas.join("")).toBe(`{"number":"${number}"}`);
    expect(finishOf(parts).usage.outputTokens.total).toBe(deltas.length);
  });

  test("call ids count the tool calls already in the prompt: unique within a thread", async () => {
    const parts = await streamParts([
      user('/call lookup_order {"number":"A-1"}'),
      ...exchange("call_1", { type: "text", value: "shipped" }),
      { role: "assistant", content: [{ type: "text", text: "shipped" }] },
      user('/call lookup_order {"number":"A-2"}'),
    ]);
    expect(parts.find((part) => part.type === "tool-call")).toMatchObject({ toolCallId: "call_2" });
  });

  test("a tool message is answered with its output word by word: a string as is, other values as JSON", async () => {
    const asked = user('/call lookup_order {"number":"A-1001"}');
    const text = await streamParts([
      asked,
      ...exchange("call_1", { type: "text", value: "Order A-1001 shipped today" }),
    ]);
    expect(textOfParts(text)).toEqual(["Order ", "A-1001 ", "shipped ", "today"]);
    expect(finishOf(text).finishReason).toEqual({ unified: "stop", raw: "stop" });
    expect(finishOf(text).usage.outputTokens.total).toBe(4);

    const json = await streamParts([
      asked,
      ...exchange("call_1", { type: "json", value: { status: "shipped", n: 2 } }),
    ]);
    expect(textOfParts(json).join("")).toBe('{"status":"shipped","n":2}');
    const error = await streamParts([
      asked,
      ...exchange("call_1", { type: "error-text", value: "no such order" }),
    ]);
    expect(textOfParts(error).join("")).toBe("no such order");
  });

  test("with an output schema, the answer to tool results is JSON built from the schema and their output", async () => {
    const asked = user('/call lookup_order {"number":"A-1001"}');
    const parts = await streamParts([asked, ...exchange("call_1", { type: "text", value: "shipped" })], {
      responseFormat: {
        type: "json",
        schema: { type: "object", properties: { status: { type: "string" } }, required: ["status"] },
      },
    });
    expect(JSON.parse(textOfParts(parts).join(""))).toEqual({ status: "shipped" });
  });

  test("an unknown tool, a prompt without tools, toolChoice none, or a /call not last: just the echo", async () => {
    const message = '/call cancel_order {"number":"A-1001"}';
    expect(textOfParts(await streamParts([user(message)])).join("")).toBe(message);
    const known = '/call lookup_order {"number":"A-1001"}';
    expect(textOfParts(await streamParts([user(known)], { tools: undefined })).join("")).toBe(known);
    expect(textOfParts(await streamParts([user(known)], { toolChoice: { type: "none" } })).join("")).toBe(
      known,
    );
    const after = await streamParts([
      user(known),
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
    ]);
    expect(after.some((part) => part.type === "tool-call")).toBe(false);
    expect(textOfParts(after).join("")).toBe(known);
  });

  test("arguments that are no JSON object get an answer saying how to write the call", async () => {
    const hint =
      '/call lookup_order: the arguments must be a JSON object. Write /call <tool> <json object>, e.g. /call lookup_order {"key": "value"}';
    for (const message of ["/call lookup_order {number: A-1001}", '/call lookup_order ["A-1001"]']) {
      const parts = await streamParts([user(message)]);
      expect(parts.some((part) => part.type === "tool-call")).toBe(false);
      expect(textOfParts(parts).join("")).toBe(hint);
    }
    // No arguments at all: an empty object.
    const bare = await streamParts([user("/call lookup_order")]);
    expect(bare.find((part) => part.type === "tool-call")).toMatchObject({ input: "{}" });
  });

  test("doGenerate answers the same turns", async () => {
    const model = createDevEchoModel();
    const called = await model.doGenerate({
      prompt: [user('/call lookup_order {"number":"A-1"}')],
      tools: [lookupOrder],
    });
    expect(called.content).toEqual([
      { type: "tool-call", toolCallId: "call_1", toolName: "lookup_order", input: '{"number":"A-1"}' },
    ]);
    expect(called.finishReason.unified).toBe("tool-calls");
  });

  test("the AI SDK's own tool loop: the call is executed and its result answered", async () => {
    const executed: unknown[] = [];
    const result = streamText({
      model: createDevEchoModel(),
      messages: [{ role: "user", content: '/call lookup_order {"number":"A-1001"}' }],
      tools: {
        lookup_order: tool({
          inputSchema: jsonSchema<{ number: string }>(lookupOrder.inputSchema),
          execute: async (input) => {
            executed.push(input);
            return { number: input.number, status: "shipped" };
          },
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(executed).toEqual([{ number: "A-1001" }]);
    expect(types).toContain("tool-call");
    expect(types).toContain("tool-result");
    expect(await result.text).toBe('{"number":"A-1001","status":"shipped"}');
    expect((await result.steps).map((step) => step.finishReason)).toEqual(["tool-calls", "stop"]);
  });
});
