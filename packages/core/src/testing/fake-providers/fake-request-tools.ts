/**
 * What a provider request carried about tools, read from either wire shape, so a test asserts
 * what the provider received (FakeRequest.tools, toolChoice, toolCalls, toolResults).
 */
import type { FakeRequest, FakeRequestTool } from "./fake-provider-script.ts";

export type RequestTools = Pick<FakeRequest, "tools" | "toolChoice" | "toolCalls" | "toolResults">;

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

const text = (value: unknown): string => (typeof value === "string" ? value : "");

const parsedOrRaw = (value: unknown): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

const tool = (name: unknown, description: unknown, parameters: unknown): FakeRequestTool => ({
  name: text(name),
  ...(typeof description === "string" ? { description } : {}),
  parameters,
});

/** OpenAI chat completions: `tools[].function`, assistant `tool_calls`, `tool` messages. */
export function openAIRequestTools(body: unknown): RequestTools {
  const request = isRecord(body) ? body : {};
  const messages = records(request.messages);
  return {
    tools: records(request.tools).map((entry) => {
      const fn = isRecord(entry.function) ? entry.function : {};
      return tool(fn.name, fn.description, fn.parameters);
    }),
    toolChoice: request.tool_choice ?? null,
    toolCalls: messages
      .filter((message) => message.role === "assistant")
      .flatMap((message) => records(message.tool_calls))
      .map((call) => {
        const fn = isRecord(call.function) ? call.function : {};
        return { id: text(call.id), name: text(fn.name), arguments: parsedOrRaw(fn.arguments) };
      }),
    toolResults: messages
      .filter((message) => message.role === "tool")
      .map((message) => ({ toolCallId: text(message.tool_call_id), content: message.content })),
  };
}

/** Anthropic messages: `tools[]` with `input_schema`, `tool_use` and `tool_result` blocks. */
export function anthropicRequestTools(body: unknown): RequestTools {
  const request = isRecord(body) ? body : {};
  const blocks = records(request.messages).flatMap((message) => records(message.content));
  return {
    tools: records(request.tools).map((entry) => tool(entry.name, entry.description, entry.input_schema)),
    toolChoice: request.tool_choice ?? null,
    toolCalls: blocks
      .filter((block) => block.type === "tool_use")
      .map((block) => ({ id: text(block.id), name: text(block.name), arguments: block.input })),
    toolResults: blocks
      .filter((block) => block.type === "tool_result")
      .map((block) => ({
        toolCallId: text(block.tool_use_id),
        content: block.content,
        ...(typeof block.is_error === "boolean" ? { isError: block.is_error } : {}),
      })),
  };
}
