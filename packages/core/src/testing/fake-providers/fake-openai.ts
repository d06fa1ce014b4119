import { argumentPieces, type FakeScript, type FakeUsage } from "./fake-provider-script.ts";
import { type FakeProviderServer, startFakeProviderServer, type WireFormat } from "./fake-provider-server.ts";
import { openAIRequestTools } from "./fake-request-tools.ts";

const sse = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

const modelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && "model" in body && typeof body.model === "string"
    ? body.model
    : "gpt-4o-mini";

const wantsUsage = (body: unknown): boolean =>
  typeof body === "object" &&
  body !== null &&
  "stream_options" in body &&
  typeof body.stream_options === "object" &&
  body.stream_options !== null &&
  "include_usage" in body.stream_options &&
  body.stream_options.include_usage === true;

const usageBlock = (usage: FakeUsage) => ({
  prompt_tokens: usage.input,
  completion_tokens: usage.output,
  total_tokens: usage.input + usage.output,
  prompt_tokens_details: { cached_tokens: usage.cachedInput ?? 0 },
  completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
});

let completionCounter = 0;
let toolCallCounter = 0;

/** OpenAI chat completions streaming (`chat.completion.chunk` objects, `data: [DONE]`). */
const openAIFormat: WireFormat = {
  path: "/chat/completions",
  errorBody: (reply) => ({
    error: {
      message: reply.message ?? `fake OpenAI error ${reply.status}`,
      type:
        reply.status === 429
          ? "rate_limit_exceeded"
          : reply.status >= 500
            ? "server_error"
            : "invalid_request_error",
      param: null,
      code: null,
    },
  }),
  requestTools: openAIRequestTools,
  frames(body, reply) {
    const id = `chatcmpl-fake-${++completionCounter}`;
    const model = modelOf(body);
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      sse({ id, object: "chat.completion.chunk", created, model, choices, ...extra });
    return {
      start: () => [chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }])],
      token: (text) => [chunk([{ index: 0, delta: { content: text }, finish_reason: null }])],
      // The first delta names the call (id, name, empty arguments); the arguments follow in pieces.
      toolCall: (call, index) => {
        const delta = (toolCall: Record<string, unknown>) =>
          chunk([{ index: 0, delta: { tool_calls: [{ index, ...toolCall }] }, finish_reason: null }]);
        return [
          delta({
            id: call.id ?? `call_fake_${++toolCallCounter}`,
            type: "function",
            function: { name: call.name, arguments: "" },
          }),
          ...argumentPieces(call).map((piece) => delta({ function: { arguments: piece } })),
        ];
      },
      finish: (usage, finishReason = reply.toolCalls?.length ? "tool_calls" : "stop") => [
        chunk([{ index: 0, delta: {}, finish_reason: finishReason }]),
        ...(wantsUsage(body) ? [chunk([], { usage: usageBlock(usage) })] : []),
        "data: [DONE]\n\n",
      ],
    };
  },
};

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions streaming format, for
 * `createOpenAI({ baseURL: server.baseUrl }).chat(model)` and OpenAI-compatible clients.
 */
export function startFakeOpenAI(script: FakeScript): FakeProviderServer {
  return startFakeProviderServer(openAIFormat, script);
}
