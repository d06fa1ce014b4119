/** What a fake provider does with one request: scripted per test. */

export interface FakeUsage {
  /** All prompt tokens, cached ones included. */
  input: number;
  cachedInput?: number;
  /** All completion tokens, reasoning included. */
  output: number;
  reasoning?: number;
}

export interface FakeStreamReply {
  type: "stream";
  tokens: string[];
  /** Reported at the end (OpenAI) or split over message_start/message_delta (Anthropic). Default: input 10, output = tokens. */
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
   * `stop_reason`). Default: `stop` / `end_turn`.
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

export interface FakeRequest {
  /** 0-based order of arrival. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body (null when it was not JSON). */
  body: unknown;
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
  reply.usage ?? { input: 10, output: reply.tokens.length };
