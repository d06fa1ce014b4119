import { argumentPieces, type FakeScript } from "./fake-provider-script.ts";
import { type FakeProviderServer, startFakeProviderServer, type WireFormat } from "./fake-provider-server.ts";
import { anthropicRequestTools } from "./fake-request-tools.ts";

const event = (name: string, payload: unknown) => `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`;

const modelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && "model" in body && typeof body.model === "string"
    ? body.model
    : "claude-sonnet-4-5";

const errorType = (status: number): string => {
  if (status === 429) return "rate_limit_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
};

let messageCounter = 0;
let toolUseCounter = 0;

/**
 * Anthropic messages streaming: message_start … content_block_delta … message_delta,
 * message_stop. A text block at index 0 (left out when the reply is only tool calls), then one
 * `tool_use` block per tool call.
 */
const anthropicFormat: WireFormat = {
  path: "/messages",
  errorBody: (reply) => ({
    type: "error",
    error: {
      type: errorType(reply.status),
      message: reply.message ?? `fake Anthropic error ${reply.status}`,
    },
  }),
  requestTools: anthropicRequestTools,
  frames(body, reply) {
    const id = `msg_fake_${++messageCounter}`;
    const model = modelOf(body);
    const toolCalls = reply.toolCalls?.length ?? 0;
    const hasText = reply.tokens.length > 0 || toolCalls === 0;
    let textOpen = hasText;
    const closeText = () => {
      if (!textOpen) return [];
      textOpen = false;
      return [event("content_block_stop", { type: "content_block_stop", index: 0 })];
    };
    return {
      start: (usage) => {
        const cached = usage.cachedInput ?? 0;
        return [
          event("message_start", {
            type: "message_start",
            message: {
              id,
              type: "message",
              role: "assistant",
              model,
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: {
                // Anthropic counts cache reads apart from input_tokens.
                input_tokens: usage.input - cached,
                cache_read_input_tokens: cached,
                cache_creation_input_tokens: 0,
                output_tokens: 1,
              },
            },
          }),
          ...(hasText
            ? [
                event("content_block_start", {
                  type: "content_block_start",
                  index: 0,
                  content_block: { type: "text", text: "" },
                }),
              ]
            : []),
          event("ping", { type: "ping" }),
        ];
      },
      token: (text) => [
        event("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text },
        }),
      ],
      toolCall: (call, callIndex) => {
        const index = (hasText ? 1 : 0) + callIndex;
        return [
          ...closeText(),
          event("content_block_start", {
            type: "content_block_start",
            index,
            content_block: {
              type: "tool_use",
              id: call.id ?? `toolu_fake_${++toolUseCounter}`,
              name: call.name,
              input: {},
            },
          }),
          ...argumentPieces(call).map((partial_json) =>
            event("content_block_delta", {
              type: "content_block_delta",
              index,
              delta: { type: "input_json_delta", partial_json },
            }),
          ),
          event("content_block_stop", { type: "content_block_stop", index }),
        ];
      },
      finish: (usage, finishReason = toolCalls > 0 ? "tool_use" : "end_turn") => [
        ...closeText(),
        event("message_delta", {
          type: "message_delta",
          delta: { stop_reason: finishReason, stop_sequence: null },
          usage: {
            output_tokens: usage.output,
            ...(usage.reasoning ? { output_tokens_details: { thinking_tokens: usage.reasoning } } : {}),
          },
        }),
        event("message_stop", { type: "message_stop" }),
      ],
    };
  },
};

/** A real HTTP server on 127.0.0.1 speaking the Anthropic messages streaming format. */
export function startFakeAnthropic(script: FakeScript): FakeProviderServer {
  return startFakeProviderServer(anthropicFormat, script);
}
