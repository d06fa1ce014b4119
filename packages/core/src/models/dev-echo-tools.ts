/**
 * dev:echo's tool rules (docs/PRODUCT-RULES.md "Prompts and versions", dev:echo): a last user
 * message `/call <tool> <json arguments>` naming an offered tool is answered with that tool
 * call; a last message of tool results is answered with their output.
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";

/** What dev:echo answers a call with, before any output schema applies. */
export type DevEchoTurn =
  | { kind: "tool-call"; toolCallId: string; toolName: string; input: string }
  /** `text` is the source of the answer: echoed, or the strings of a schema's JSON. */
  | { kind: "text"; text: string };

const CALL = /^\s*\/call\s+(\S+)(?:\s+([\s\S]*?))?\s*$/;

/** A tool's output as text: a string as it is, any other value as its JSON. */
export function toolOutputText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    case "execution-denied":
      return output.reason ?? "execution denied";
    case "content":
      return output.value.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
}

/** The text of a user message (its text parts). */
const userText = (message: LanguageModelV4Prompt[number]): string => {
  if (typeof message.content === "string") return message.content;
  let text = "";
  for (const part of message.content) if (part.type === "text") text += part.text;
  return text;
};

/** Ids `call_1`, `call_2`, …: one more than the tool calls already in the prompt (unique in a thread). */
const nextCallId = (prompt: LanguageModelV4Prompt): string => {
  let calls = 0;
  for (const message of prompt)
    if (message.role === "assistant")
      for (const part of message.content) if (part.type === "tool-call") calls++;
  return `call_${calls + 1}`;
};

const offers = (call: LanguageModelV4CallOptions, name: string): boolean =>
  call.toolChoice?.type !== "none" &&
  (call.tools ?? []).some((tool) => tool.type === "function" && tool.name === name);

const usageHint = (name: string) =>
  `/call ${name}: the arguments must be a JSON object. Write /call <tool> <json object>, e.g. /call ${name} {"key": "value"}`;

/** A `/call` of an offered tool: the call, or (arguments that are no JSON object) how to write it. */
function callTurn(call: LanguageModelV4CallOptions, name: string, rawArguments: string): DevEchoTurn {
  let parsed: unknown;
  try {
    parsed = rawArguments === "" ? {} : JSON.parse(rawArguments);
  } catch {
    return { kind: "text", text: usageHint(name) };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { kind: "text", text: usageHint(name) };
  return {
    kind: "tool-call",
    toolCallId: nextCallId(call.prompt),
    toolName: name,
    input: JSON.stringify(parsed),
  };
}

/** The last user message's text, whatever follows it (assistant turns included). */
const lastUserText = (prompt: LanguageModelV4Prompt): string => {
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index]!;
    if (message.role === "user") return userText(message);
  }
  return "";
};

/**
 * What dev:echo answers: a tool call when the prompt ends with a user `/call` of an offered tool
 * (toolChoice `none` offers none); the tool outputs (joined by newlines) when it ends with a
 * tool message; else the last user message.
 */
export function devEchoTurn(call: LanguageModelV4CallOptions): DevEchoTurn {
  const last = call.prompt.at(-1);
  if (last?.role === "tool") {
    const outputs = last.content.flatMap((part) =>
      part.type === "tool-result" ? [toolOutputText(part.output)] : [],
    );
    return { kind: "text", text: outputs.join("\n") };
  }
  if (last?.role === "user") {
    const match = CALL.exec(userText(last));
    if (match && offers(call, match[1]!)) return callTurn(call, match[1]!, match[2] ?? "");
  }
  return { kind: "text", text: lastUserText(call.prompt) };
}
