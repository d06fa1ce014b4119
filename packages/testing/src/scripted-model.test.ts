/**
 * The scripted model's tool calls, read by the real AI SDK provider that Promptrun uses for it
 * (OpenAI-compatible chat completions) in the AI SDK's own tool loop: the shape an app's tests
 * rely on when they drive a tool run.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { jsonSchema, stepCountIs, streamText, tool } from "ai";
import { startScriptedModel } from "./scripted-model.ts";

const script = startScriptedModel();
afterEach(() => script.reset());
afterAll(() => script.server.close());

const model = createOpenAICompatible({
  name: "script",
  baseURL: script.server.baseUrl,
  apiKey: "scripted",
}).chatModel("any");

/** A two-tool loop as an app would run it; returns what the tools were called with and the answer. */
async function runLoop(message: string) {
  const executed: Array<{ tool: string; input: unknown }> = [];
  const result = streamText({
    model,
    messages: [{ role: "user", content: message }],
    tools: {
      lookup_order: tool({
        description: "Look an order up by its number.",
        inputSchema: jsonSchema<{ number: string }>({
          type: "object",
          properties: { number: { type: "string" } },
          required: ["number"],
        }),
        execute: async (input) => {
          executed.push({ tool: "lookup_order", input });
          return { number: input.number, status: "shipped" };
        },
      }),
      get_weather: tool({
        inputSchema: jsonSchema<{ city: string }>({
          type: "object",
          properties: { city: { type: "string" } },
        }),
        execute: async (input) => {
          executed.push({ tool: "get_weather", input });
          return `sunny in ${input.city}`;
        },
      }),
    },
    stopWhen: stepCountIs(5),
    maxRetries: 0,
  });
  const text = await result.text;
  const steps = await result.steps;
  return { executed, text, finishReasons: steps.map((step) => step.finishReason), steps };
}

describe("scripted model: tool calls", () => {
  test("callTools answers the next request with the calls; then the default echoes the tool results", async () => {
    script.callTools(
      [
        { id: "call_a", name: "lookup_order", arguments: { number: "A-1001" } },
        { id: "call_b", name: "get_weather", arguments: { city: "Oslo" } },
      ],
      { text: "Looking it up." },
    );
    const before = script.requests.length;
    const { executed, text, finishReasons, steps } = await runLoop("Where is my order A-1001?");
    expect(finishReasons).toEqual(["tool-calls", "stop"]);
    expect(steps[0]!.text).toBe("Looking it up.");
    expect(executed).toEqual([
      { tool: "lookup_order", input: { number: "A-1001" } },
      { tool: "get_weather", input: { city: "Oslo" } },
    ]);
    // The second request carries the calls and their results; the model saw both.
    const [first, second] = script.requests.slice(before);
    expect(first!.tools.map((offered) => offered.name)).toEqual(["lookup_order", "get_weather"]);
    expect(first!.toolResults).toEqual([]);
    expect(second!.toolCalls).toEqual([
      { id: "call_a", name: "lookup_order", arguments: { number: "A-1001" } },
      { id: "call_b", name: "get_weather", arguments: { city: "Oslo" } },
    ]);
    expect(second!.toolResults).toEqual([
      { toolCallId: "call_a", content: '{"number":"A-1001","status":"shipped"}' },
      { toolCallId: "call_b", content: "sunny in Oslo" },
    ]);
    expect(text).toBe('{"number":"A-1001","status":"shipped"}\nsunny in Oslo');
  });

  test("callTools twice scripts two tool steps; a standing reply then answers", async () => {
    script.callTools([{ name: "lookup_order", arguments: { number: "A-1" } }]);
    script.callTools([{ name: "lookup_order", arguments: { number: "A-2" } }]);
    script.reply("Both shipped.");
    const { executed, text, finishReasons } = await runLoop("two orders");
    expect(executed.map((call) => call.input)).toEqual([{ number: "A-1" }, { number: "A-2" }]);
    expect(finishReasons).toEqual(["tool-calls", "tool-calls", "stop"]);
    expect(text).toBe("Both shipped.");
  });

  test("tool calls also go through queue as fake-provider replies", async () => {
    const before = script.requests.length;
    script.queue({
      type: "stream",
      tokens: [],
      toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }],
    });
    const { executed, text } = await runLoop("weather?");
    expect(executed).toEqual([{ tool: "get_weather", input: { city: "Rome" } }]);
    expect(text).toBe("sunny in Rome");
    expect(script.requests.slice(before)).toHaveLength(2);
  });
});
