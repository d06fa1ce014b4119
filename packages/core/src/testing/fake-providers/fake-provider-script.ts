/** What a fake provider does with one request: scripted per test. */

export interface FakeUsage {
  /** All prompt tokens, cached ones included. */
  input: number;
  cachedInput?: number;
  /** All completion tokens, reasoning included. */
  output: number;
  reasoning?: number;
}

/** A tool call a fake model streams after its text tokens. */
export interface FakeToolCall {
  /** Default: `call_fake_<n>` (OpenAI) / `toolu_fake_<n>` (Anthropic), unique per server. */
  id?: string;
  name: string;
  /**
   * The arguments: an object is sent as its JSON; a string is sent as it is (to play a model
   * that sends broken JSON). Either way it streams in a few pieces.
   */
  arguments: Record<string, unknown> | string;
}

export interface FakeStreamReply {
  type: "stream";
  tokens: string[];
  /**
   * Tool calls streamed after the tokens (OpenAI `delta.tool_calls` with their `index`; Anthropic
   * `tool_use` blocks with `input_json_delta`). With any, the default finish reason is
   * `tool_calls` / `tool_use`.
   */
  toolCalls?: FakeToolCall[];
  /** Reported at the end (OpenAI) or split over message_start/message_delta (Anthropic). Default: input 10, output = tokens + tool calls. */
  usage?: FakeUsage;
  /** Pause before each token. */
  tokenDelayMs?: number;
  /** Send this many tokens, then close the connection without finishing the stream. */
  cutAfterTokens?: number;
  /** Send this many tokens, then go silent until the client leaves or the server closes. */
  hangAfterTokens?: number;
  /** Sends the tokens, then waits for this before finishing (deterministic overlap in tests). */
  holdBeforeFinish?: Promise<unknown>;
  /**
   * Why the answer stopped, in the provider's own words (OpenAI `finish_reason`, Anthropic
   * `stop_reason`). Default: `stop` / `end_turn` (`tool_calls` / `tool_use` with tool calls).
   */
  finishReason?: string;
}

export interface FakeErrorReply {
  type: "error";
  status: number;
  message?: string;
  /** Sent as the `Retry-After` header (seconds or an HTTP date). */
  retryAfter?: string;
  headers?: Record<string, string>;
}

/**
 * A hostile upstream: `bytes` of `x` with no newline (as fast as the client reads), under
 * `status` (default 200, as an event stream; other statuses as a JSON error body).
 */
export interface FakeFloodReply {
  type: "flood";
  bytes: number;
  status?: number;
  /** Bytes per write (default 64 KiB). */
  chunkBytes?: number;
}

export type FakeReply = FakeStreamReply | FakeErrorReply | FakeFloodReply;

/** A tool the request offered the model, whatever the provider's wire shape. */
export interface FakeRequestTool {
  name: string;
  description?: string;
  /** The JSON Schema of its arguments (OpenAI `function.parameters`, Anthropic `input_schema`). */
  parameters: unknown;
}

/** An earlier tool call the request replays (an assistant message's `tool_calls` / `tool_use` block). */
export interface FakeRequestToolCall {
  id: string;
  name: string;
  /** Parsed from the JSON text the provider received (the raw text when it is not JSON). */
  arguments: unknown;
}

/** A tool result the request carries (an OpenAI `tool` message, an Anthropic `tool_result` block). */
export interface FakeRequestToolResult {
  toolCallId: string;
  /** The result as the provider received it: a string, or Anthropic's content blocks. */
  content: unknown;
  /** Anthropic's `is_error`; OpenAI has no such flag (undefined). */
  isError?: boolean;
}

export interface FakeRequest {
  /** 0-based order of arrival. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body (null when it was not JSON). */
  body: unknown;
  /** The tools the request offered, in order ([] when none). */
  tools: FakeRequestTool[];
  /** The request's `tool_choice` as sent (null when absent). */
  toolChoice: unknown;
  /** Earlier tool calls replayed in its messages, in order. */
  toolCalls: FakeRequestToolCall[];
  /** Tool results in its messages, in order. */
  toolResults: FakeRequestToolResult[];
  /** `Date.now()` at arrival. */
  receivedAt: number;
  /** Position in the server's event order (requests arriving and streams ending share one counter). */
  sequence: number;
}

/**
 * One reply for every request, a list consumed in order (the last one repeats), or a function
 * of the request.
 */
export type FakeScript = FakeReply | FakeReply[] | ((request: FakeRequest) => FakeReply | Promise<FakeReply>);

export const replyFor = async (script: FakeScript, request: FakeRequest): Promise<FakeReply> => {
  if (typeof script === "function") return script(request);
  if (!Array.isArray(script)) return script;
  const reply = script[Math.min(request.index, script.length - 1)];
  if (!reply) throw new Error("fake provider script is an empty list");
  return reply;
};

export const defaultUsage = (reply: FakeStreamReply): FakeUsage =>
  reply.usage ?? { input: 10, output: reply.tokens.length + (reply.toolCalls?.length ?? 0) };

/** A tool call's arguments as JSON text, in up to three pieces (streamed one per frame). */
export const argumentPieces = (call: FakeToolCall): string[] => {
  const text = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
  if (text.length < 3) return [text];
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)].filter(
    (piece) => piece !== "",
  );
};
