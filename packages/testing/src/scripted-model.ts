import {
  type FakeProviderServer,
  type FakeReply,
  type FakeRequest,
  type FakeScript,
  type FakeToolCall,
  type FakeUsage,
  startFakeOpenAI,
} from "@promptrun/core/testing";

/**
 * A tool call to script: `name` of a tool the prompt offers, `arguments` an object (or a string
 * sent as it is, to play a model that sends broken JSON), `id` optional (`call_fake_<n>`).
 */
export type ScriptedToolCall = FakeToolCall;

/** Options of a scripted reply. */
export interface ScriptedReplyOptions {
  /** Pause before each token, in ms: makes streaming observable. */
  tokenDelayMs?: number;
  /** Usage to report (default: input 10, output = number of tokens). */
  usage?: FakeUsage;
}

/**
 * The development model of a test Promptrun, scripted per test at the wire level: a fake
 * OpenAI-compatible server that the real provider code talks to. By default it echoes the last
 * user message word by word (a request ending with tool results: their contents).
 */
export interface ScriptedModel {
  /** Model ref to use in prompts: `script:any`. */
  readonly modelRef: string;
  /**
   * Requests the model received: the chat-completions bodies with their messages, and what they
   * carried about tools (`tools`, `toolChoice`, the earlier `toolCalls`, the `toolResults`).
   */
  readonly requests: FakeRequest[];
  /** From now on, every request streams `text` (a string is split into words, spaces kept). */
  reply(text: string | string[], options?: ScriptedReplyOptions): void;
  /**
   * From now on, every request streams `value` as JSON text (in a few pieces): the answer to a
   * prompt with `output: {format: json_schema}`, which becomes the run's `outputJson`.
   */
  replyJson(value: unknown, options?: ScriptedReplyOptions): void;
  /** From now on, echo the last user message word by word (the default). */
  echo(options?: ScriptedReplyOptions): void;
  /**
   * The next request answers with these tool calls (after `text`, if given), finishing with
   * `tool_calls`; then the standing behaviour resumes. Call it again for the following step.
   */
  callTools(calls: ScriptedToolCall[], options?: ScriptedReplyOptions & { text?: string | string[] }): void;
  /** The next requests get these replies, in order; then the standing behaviour resumes. */
  queue(...replies: FakeReply[]): void;
  /** The next `times` requests fail with `status` (429 and 5xx are retried by the engine). */
  fail(status: number, options?: { message?: string; times?: number; retryAfter?: string }): void;
  /** Back to the default: clears queued replies and echoes. */
  reset(): void;
  /** Full control: any fake-provider script. */
  use(script: FakeScript): void;
  /** Waits until the model has received `count` requests in all. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
}

/** Splits text into stream tokens the way a model would: words with their trailing spaces. */
export const wordsOf = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [];

/** JSON text in stream tokens: the pieces between commas, each with its comma. */
const jsonTokensOf = (value: unknown): string[] => {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError("replyJson: the value has no JSON form");
  return text.match(/[^,]+,?|,/g) ?? [text];
};

const messagesOf = (body: unknown): unknown[] =>
  typeof body === "object" && body !== null && "messages" in body && Array.isArray(body.messages)
    ? body.messages
    : [];

const isToolMessage = (message: unknown): message is { role: "tool"; content: unknown } =>
  typeof message === "object" && message !== null && "role" in message && message.role === "tool";

/** The contents of the tool messages that end the request, joined by newlines; null when it ends otherwise. */
function trailingToolResults(body: unknown): string | null {
  const messages = messagesOf(body);
  let start = messages.length;
  while (start > 0 && isToolMessage(messages[start - 1])) start--;
  if (start === messages.length) return null;
  return messages
    .slice(start)
    .map((message) => {
      const content = (message as { content: unknown }).content;
      return typeof content === "string" ? content : JSON.stringify(content);
    })
    .join("\n");
}

function lastUserMessage(body: unknown): string {
  for (const message of [...messagesOf(body)].reverse()) {
    if (typeof message !== "object" || message === null || !("role" in message) || message.role !== "user")
      continue;
    const content = "content" in message ? message.content : undefined;
    if (typeof content === "string") return content;
    if (Array.isArray(content))
      return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  }
  return "";
}

/** Starts the fake provider server behind a {@link ScriptedModel}. */
export function startScriptedModel(): ScriptedModel & { server: FakeProviderServer } {
  const echoLastUserMessage =
    (options: ScriptedReplyOptions): FakeScript =>
    (request) => ({
      type: "stream",
      tokens: wordsOf(trailingToolResults(request.body) ?? lastUserMessage(request.body)),
      ...options,
    });
  let standing: FakeScript = echoLastUserMessage({});
  const queued: FakeReply[] = [];
  const server = startFakeOpenAI(async (request) => {
    const next = queued.shift();
    if (next) return next;
    if (typeof standing === "function") return standing(request);
    return Array.isArray(standing)
      ? (standing[Math.min(request.index, standing.length - 1)] ?? standing[0]!)
      : standing;
  });
  return {
    server,
    modelRef: "script:any",
    requests: server.requests,
    reply(text, options = {}) {
      const tokens = Array.isArray(text) ? text : wordsOf(text);
      standing = { type: "stream", tokens, ...options };
    },
    replyJson(value, options = {}) {
      standing = { type: "stream", tokens: jsonTokensOf(value), ...options };
    },
    echo(options = {}) {
      standing = echoLastUserMessage(options);
    },
    reset() {
      queued.length = 0;
      standing = echoLastUserMessage({});
    },
    callTools(calls, { text, ...options } = {}) {
      const tokens = text === undefined ? [] : Array.isArray(text) ? text : wordsOf(text);
      queued.push({ type: "stream", tokens, toolCalls: calls, ...options });
    },
    queue(...replies) {
      queued.push(...replies);
    },
    fail(status, options = {}) {
      const reply: FakeReply = {
        type: "error",
        status,
        ...(options.message ? { message: options.message } : {}),
        ...(options.retryAfter ? { retryAfter: options.retryAfter } : {}),
      };
      for (let count = 0; count < (options.times ?? 1); count += 1) queued.push(reply);
    },
    use(script) {
      queued.length = 0;
      standing = script;
    },
    waitForRequests: (count, timeoutMs) => server.waitForRequests(count, timeoutMs),
  };
}
