import { afterEach, describe, expect, test } from "bun:test";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type {
  LanguageModelV4,
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import type { FakeReply } from "./fake-provider-script.ts";
import type { FakeProviderServer } from "./fake-provider-server.ts";
import { startFakeAnthropic, startFakeOpenAI } from "./index.ts";

const servers: FakeProviderServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const post = (server: FakeProviderServer, path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("fake providers", () => {
  test("OpenAI: chunks, then the usage chunk only when include_usage is asked, then [DONE]", async () => {
    const server = startFakeOpenAI({
      type: "stream",
      tokens: ["a", "b"],
      usage: { input: 9, cachedInput: 4, output: 2, reasoning: 1 },
    });
    servers.push(server);
    const withUsage = await (
      await post(server, "/chat/completions", { model: "m", stream_options: { include_usage: true } })
    ).text();
    expect(withUsage).toContain('"delta":{"content":"a"}');
    expect(withUsage).toContain('"prompt_tokens_details":{"cached_tokens":4}');
    expect(withUsage).toContain('"completion_tokens_details":{"reasoning_tokens":1}');
    expect(withUsage.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const withoutUsage = await (await post(server, "/chat/completions", { model: "m" })).text();
    expect(withoutUsage).not.toContain("prompt_tokens");
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: "m", stream_options: { include_usage: true } },
      { model: "m" },
    ]);
    expect(server.streams.map((stream) => stream.outcome)).toEqual(["completed", "completed"]);
  });

  test("Anthropic: message_start with cache reads, text deltas, message_delta usage, message_stop", async () => {
    const server = startFakeAnthropic({
      type: "stream",
      tokens: ["hi"],
      usage: { input: 10, cachedInput: 6, output: 3 },
    });
    servers.push(server);
    const text = await (await post(server, "/messages", { model: "claude" })).text();
    const names = [...text.matchAll(/^event: (\S+)$/gm)].map((match) => match[1]);
    expect(names).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(text).toContain('"input_tokens":4,"cache_read_input_tokens":6');
    expect(text).toContain('"delta":{"type":"text_delta","text":"hi"}');
  });

  test("errors carry their status and Retry-After", async () => {
    const server = startFakeOpenAI({ type: "error", status: 429, retryAfter: "3", message: "slow down" });
    servers.push(server);
    const response = await post(server, "/chat/completions", {});
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(await response.json()).toMatchObject({ error: { message: "slow down" } });
  });

  test("a hanging stream stays open until the server closes", async () => {
    const server = startFakeOpenAI({ type: "stream", tokens: ["x", "y"], hangAfterTokens: 1 });
    servers.push(server);
    const response = await post(server, "/chat/completions", {});
    const reader = response.body!.getReader();
    await reader.read();
    expect(server.openStreams()).toBe(1);
    const rest = (async () => {
      try {
        while (!(await reader.read()).done) {}
        return "ended";
      } catch {
        return "reset";
      }
    })();
    await server.close();
    expect(["ended", "reset"]).toContain(await rest);
    expect(server.streams[0]!.outcome).toBe("server-closed");
    expect(server.openStreams()).toBe(0);
  });

  test("a cut stream resets the connection mid-response", async () => {
    const server = startFakeOpenAI({
      type: "stream",
      tokens: ["x", "y", "z"],
      cutAfterTokens: 1,
      tokenDelayMs: 10,
    });
    servers.push(server);
    const response = await post(server, "/chat/completions", {});
    await expect(response.text()).rejects.toThrow();
    expect(server.streams[0]!.outcome).toBe("cut");
  });
});

describe("fake providers stream tool calls that the real AI SDK providers read", () => {
  const lookupOrder: LanguageModelV4FunctionTool = {
    type: "function",
    name: "lookup_order",
    description: "Look an order up by its number.",
    inputSchema: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
  };
  const getWeather: LanguageModelV4FunctionTool = {
    type: "function",
    name: "get_weather",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  };
  const reply: FakeReply = {
    type: "stream",
    tokens: ["Let me ", "check."],
    toolCalls: [
      { name: "lookup_order", arguments: { number: "A-1001", lines: [1, 2] } },
      { id: "given_id", name: "get_weather", arguments: { city: "Zürich" } },
    ],
  };
  const question: LanguageModelV4Prompt = [
    { role: "user", content: [{ type: "text", text: "Where is A-1001?" }] },
  ];
  /** The prompt of the second step: the calls and their results. */
  const withResults = (ids: [string, string]): LanguageModelV4Prompt => [
    ...question,
    {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: ids[0], toolName: "lookup_order", input: { number: "A-1001" } },
        { type: "tool-call", toolCallId: ids[1], toolName: "get_weather", input: { city: "Zürich" } },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: ids[0],
          toolName: "lookup_order",
          output: { type: "text", value: "shipped" },
        },
        {
          type: "tool-result",
          toolCallId: ids[1],
          toolName: "get_weather",
          output: { type: "error-text", value: "weather service down" },
        },
      ],
    },
  ];

  const partsOf = async (model: LanguageModelV4, prompt: LanguageModelV4Prompt) => {
    const { stream } = await model.doStream({
      prompt,
      tools: [lookupOrder, getWeather],
      toolChoice: { type: "auto" },
    });
    const parts: LanguageModelV4StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const calls = parts.filter((part) => part.type === "tool-call");
    const finish = parts.find((part) => part.type === "finish");
    const text = parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join("");
    return { calls, finish, text, errors: parts.filter((part) => part.type === "error") };
  };

  test("OpenAI chat completions: delta.tool_calls by index, finish_reason tool_calls; the request's tools and results recorded", async () => {
    const server = startFakeOpenAI([reply, reply, { type: "stream", tokens: ["Shipped."] }]);
    servers.push(server);
    const model = createOpenAI({ apiKey: "sk-test", baseURL: server.baseUrl }).chat("gpt-4o-mini");
    const first = await partsOf(model, question);
    expect(first.errors).toEqual([]);
    expect(first.text).toBe("Let me check.");
    expect(first.calls.map(({ toolName, input }) => ({ toolName, input }))).toEqual([
      { toolName: "lookup_order", input: '{"number":"A-1001","lines":[1,2]}' },
      { toolName: "get_weather", input: '{"city":"Zürich"}' },
    ]);
    const [generated, given] = first.calls.map((call) => (call as { toolCallId: string }).toolCallId);
    expect(generated).toMatch(/^call_fake_\d+$/);
    expect(given).toBe("given_id");
    expect(first.finish).toMatchObject({ finishReason: { unified: "tool-calls", raw: "tool_calls" } });
    // The arguments came in pieces, several calls in one reply with their index.
    const wire = await (await post(server, "/chat/completions", { model: "m" })).text();
    expect(wire).toContain('"tool_calls":[{"index":1,"id":"given_id","type":"function"');
    expect(wire.match(/"tool_calls":\[\{"index":0,"function":\{"arguments"/g)).toHaveLength(3);

    const second = await partsOf(model, withResults([generated!, given!]));
    expect(second.text).toBe("Shipped.");
    expect(second.finish).toMatchObject({ finishReason: { unified: "stop" } });
    const received = server.requests[2]!;
    expect(received.tools).toEqual([
      {
        name: "lookup_order",
        description: "Look an order up by its number.",
        parameters: expect.objectContaining({ type: "object", required: ["number"] }),
      },
      { name: "get_weather", parameters: expect.objectContaining({ type: "object" }) },
    ]);
    expect(received.toolChoice).toBe("auto");
    expect(received.toolCalls).toEqual([
      { id: generated!, name: "lookup_order", arguments: { number: "A-1001" } },
      { id: "given_id", name: "get_weather", arguments: { city: "Zürich" } },
    ]);
    expect(received.toolResults).toEqual([
      { toolCallId: generated!, content: "shipped" },
      // The OpenAI provider sends an error result as {"error": …} (it has no error flag).
      { toolCallId: "given_id", content: '{"error":"weather service down"}' },
    ]);
    expect(server.requests[0]!.toolResults).toEqual([]);
  });

  test("Anthropic: tool_use blocks with input_json_delta, stop_reason tool_use; tool_result blocks recorded", async () => {
    const server = startFakeAnthropic([
      reply,
      { type: "stream", tokens: [], toolCalls: [{ name: "lookup_order", arguments: '{"number": "A-' }] },
      { type: "stream", tokens: ["Shipped."] },
    ]);
    servers.push(server);
    const model = createAnthropic({ apiKey: "sk-ant-test", baseURL: server.baseUrl })("claude-sonnet-4-5");
    const first = await partsOf(model, question);
    expect(first.errors).toEqual([]);
    expect(first.text).toBe("Let me check.");
    expect(first.calls.map(({ toolName, input }) => ({ toolName, input }))).toEqual([
      { toolName: "lookup_order", input: '{"number":"A-1001","lines":[1,2]}' },
      { toolName: "get_weather", input: '{"city":"Zürich"}' },
    ]);
    const [generated, given] = first.calls.map((call) => (call as { toolCallId: string }).toolCallId);
    expect(generated).toMatch(/^toolu_fake_\d+$/);
    expect(given).toBe("given_id");
    expect(first.finish).toMatchObject({ finishReason: { unified: "tool-calls", raw: "tool_use" } });

    // Only a tool call, its arguments broken JSON as a model may send them: no text block at all.
    const wire = await (await post(server, "/messages", { model: "claude" })).text();
    expect([...wire.matchAll(/"content_block":\{"type":"(\w+)"/g)].map((match) => match[1])).toEqual([
      "tool_use",
    ]);
    expect(wire).toContain('"delta":{"type":"input_json_delta","partial_json":"{\\"num"}');
    expect(wire).toContain('"stop_reason":"tool_use"');

    const second = await partsOf(model, withResults([generated!, given!]));
    expect(second.text).toBe("Shipped.");
    const received = server.requests[2]!;
    expect(received.tools.map((tool) => tool.name)).toEqual(["lookup_order", "get_weather"]);
    expect(received.tools[0]!.parameters).toMatchObject({ type: "object", required: ["number"] });
    expect(received.toolChoice).toEqual({ type: "auto" });
    expect(received.toolCalls).toEqual([
      { id: generated!, name: "lookup_order", arguments: { number: "A-1001" } },
      { id: "given_id", name: "get_weather", arguments: { city: "Zürich" } },
    ]);
    expect(received.toolResults).toEqual([
      // The provider leaves is_error out unless it is true.
      { toolCallId: generated!, content: "shipped" },
      { toolCallId: "given_id", content: "weather service down", isError: true },
    ]);
  });
});
