import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { type DevEchoTurn, devEchoTurn, toolOutputText } from "./dev-echo-tools.ts";
import { jsonFromSchema } from "./json-from-schema.ts";

export interface DevEchoOptions {
  /** Pause between streamed words (prompt param `delayMs`). */
  delayMs?: number;
}

/** Counts words in one pass without building an array of them (prompts may be megabytes). */
const countWords = (text: string): number => {
  let words = 0;
  let inWord = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const space =
      code === 32 ||
      (code >= 9 && code <= 13) ||
      code === 160 ||
      code === 0xfeff ||
      (code >= 0x2000 &&
        (code <= 0x200a ||
          code === 0x2028 ||
          code === 0x2029 ||
          code === 0x202f ||
          code === 0x205f ||
          code === 0x3000)) ||
      code === 0x1680;
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
};

/**
 * Characters of the last user message that dev:echo streams back at most: a development model
 * must not let one large input (an 800 KB message became 160,000 token events) hold the server.
 */
export const DEV_ECHO_MAX_CHARS = 16_384;
/** Pieces streamed between two yields to the event loop when there is no delay. */
const PIECES_PER_YIELD = 64;

/** Words with their trailing whitespace (leading whitespace first): the pieces concatenate to `text`. */
export const echoPieces = (text: string): string[] => text.match(/^\s+|\S+\s*/g) ?? [];

/** The echoed text: the message up to DEV_ECHO_MAX_CHARS, cut back to a whole piece. */
const echoedText = (text: string): string => {
  if (text.length <= DEV_ECHO_MAX_CHARS) return text;
  const head = text.slice(0, DEV_ECHO_MAX_CHARS);
  // Drop a word cut in half (unless the head is one single word).
  const cut = /\S$/.test(head) && /\S/.test(text[DEV_ECHO_MAX_CHARS]!) ? head.replace(/\S+$/, "") : head;
  return cut.length > 0 ? cut : head;
};

/** A macrotask turn: lets timers and I/O run between bursts of pieces. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Characters per streamed piece of a JSON answer (its usage counts one output token per piece). */
const JSON_PIECE_CHARS = 16;

/** The schema a call asks its answer to conform to, if any. */
const outputSchemaOf = (call: LanguageModelV4CallOptions): unknown =>
  call.responseFormat?.type === "json" && call.responseFormat.schema !== undefined
    ? call.responseFormat.schema
    : undefined;

/** Pieces a tool call's input streams in at most: a megabyte of arguments is not 65,000 parts. */
const MAX_INPUT_PIECES = 256;

/** Text cut into pieces of `size` characters. */
const fixedPieces = (text: string, size = JSON_PIECE_CHARS): string[] => {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
};

/** A tool call's input in JSON_PIECE_CHARS pieces, larger ones past MAX_INPUT_PIECES of them. */
const inputPieces = (input: string): string[] =>
  fixedPieces(input, Math.max(JSON_PIECE_CHARS, Math.ceil(input.length / MAX_INPUT_PIECES)));

/**
 * What dev:echo answers (dev-echo-tools.ts picks the turn): a tool call whose JSON input streams
 * in JSON_PIECE_CHARS pieces, the echoed text as word pieces, or JSON built from an output schema.
 * `json`: each piece counts as one output token.
 */
type Answer =
  | { kind: "tool-call"; call: Extract<DevEchoTurn, { kind: "tool-call" }>; pieces: string[]; json: true }
  | { kind: "text"; pieces: string[]; json: boolean };

const answerOf = (call: LanguageModelV4CallOptions): Answer => {
  const turn = devEchoTurn(call);
  if (turn.kind === "tool-call")
    return { kind: "tool-call", call: turn, pieces: inputPieces(turn.input), json: true };
  const text = echoedText(turn.text);
  const schema = outputSchemaOf(call);
  return schema === undefined
    ? { kind: "text", pieces: echoPieces(text), json: false }
    : { kind: "text", pieces: fixedPieces(JSON.stringify(jsonFromSchema(schema, text))), json: true };
};

/** The words a message carries: its text, a tool call's input, a tool result's output. */
const wordsOfMessage = (message: LanguageModelV4Prompt[number]): number => {
  if (typeof message.content === "string") return countWords(message.content);
  let words = 0;
  for (const part of message.content) {
    if (part.type === "text") words += countWords(part.text);
    else if (part.type === "tool-call") words += countWords(JSON.stringify(part.input) ?? "");
    else if (part.type === "tool-result") words += countWords(toolOutputText(part.output));
  }
  return words;
};

const usageOf = (prompt: LanguageModelV4Prompt, outputWords: number): LanguageModelV4Usage => {
  const inputWords = prompt.reduce((sum, message) => sum + wordsOfMessage(message), 0);
  return {
    inputTokens: { total: inputWords, noCache: inputWords, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputWords, text: outputWords, reasoning: 0 },
  };
};

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException("The operation was aborted.", "AbortError");

/** Resolves after `ms`, or rejects as soon as the signal aborts. */
const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    if (ms <= 0) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

const STOP: LanguageModelV4FinishReason = { unified: "stop", raw: "stop" };
const TOOL_CALLS: LanguageModelV4FinishReason = { unified: "tool-calls", raw: "tool_calls" };

interface Frames {
  open: LanguageModelV4StreamPart[];
  delta: (piece: string) => LanguageModelV4StreamPart;
  close: LanguageModelV4StreamPart[];
  finishReason: LanguageModelV4FinishReason;
}

/** The stream parts around and between an answer's pieces: a text block, or one tool call's input. */
const framesOf = (answer: Answer): Frames => {
  if (answer.kind === "text")
    return {
      open: [{ type: "text-start", id: "0" }],
      delta: (delta) => ({ type: "text-delta", id: "0", delta }),
      close: [{ type: "text-end", id: "0" }],
      finishReason: STOP,
    };
  const { toolCallId: id, toolName, input } = answer.call;
  return {
    open: [{ type: "tool-input-start", id, toolName }],
    delta: (delta) => ({ type: "tool-input-delta", id, delta }),
    close: [
      { type: "tool-input-end", id },
      { type: "tool-call", toolCallId: id, toolName, input },
    ],
    finishReason: TOOL_CALLS,
  };
};

/** doGenerate's content: the answer as one text, or its tool call. */
const contentOf = (answer: Answer): LanguageModelV4Content[] =>
  answer.kind === "text"
    ? [{ type: "text", text: answer.pieces.join("") }]
    : [
        {
          type: "tool-call",
          toolCallId: answer.call.toolCallId,
          toolName: answer.call.toolName,
          input: answer.call.input,
        },
      ];

/**
 * `dev:echo`: a deterministic development model (never a real one). Streams back the last user
 * message (its first DEV_ECHO_MAX_CHARS characters) word by word, waiting `delayMs` between
 * words, and reports word counts as usage (input: words of every prompt message; output: words
 * streamed). A call with an output schema gets JSON built from the schema instead
 * (json-from-schema.ts), in JSON_PIECE_CHARS pieces counted as one output token each. A
 * `/call <tool> <json>` user message calls that tool, and tool results are answered with their
 * output (dev-echo-tools.ts). PROMPTRUN_DEV_MODEL=false turns it off (see known-providers.ts).
 */
export function createDevEchoModel(options: DevEchoOptions = {}): LanguageModelV4 {
  const delayMs = options.delayMs ?? 0;
  return {
    specificationVersion: "v4",
    provider: "dev",
    modelId: "echo",
    supportedUrls: {},

    async doGenerate(call: LanguageModelV4CallOptions) {
      const answer = answerOf(call);
      const { pieces, json } = answer;
      await pause(delayMs * Math.max(0, pieces.length - 1), call.abortSignal);
      return {
        content: contentOf(answer),
        finishReason: answer.kind === "text" ? STOP : TOOL_CALLS,
        usage: usageOf(call.prompt, json ? pieces.length : countWords(pieces.join(""))),
        warnings: [],
      };
    },

    async doStream(call: LanguageModelV4CallOptions) {
      const signal = call.abortSignal;
      if (signal?.aborted) throw abortError(signal);
      const answer = answerOf(call);
      const { pieces, json } = answer;
      const frames = framesOf(answer);
      let cancelled = false;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          try {
            controller.enqueue({ type: "stream-start", warnings: [] });
            controller.enqueue({ type: "response-metadata", modelId: "echo" });
            for (const part of frames.open) controller.enqueue(part);
            let outputWords = 0;
            for (const [index, piece] of pieces.entries()) {
              if (index > 0 && delayMs > 0) await pause(delayMs, signal);
              else if (index > 0 && index % PIECES_PER_YIELD === 0) await yieldToLoop();
              if (cancelled) return;
              if (signal?.aborted) throw abortError(signal);
              controller.enqueue(frames.delta(piece));
              outputWords += json ? 1 : countWords(piece);
            }
            for (const part of frames.close) controller.enqueue(part);
            controller.enqueue({
              type: "finish",
              usage: usageOf(call.prompt, outputWords),
              finishReason: frames.finishReason,
            });
            controller.close();
          } catch (error) {
            if (!cancelled) controller.error(error);
          }
        },
        cancel() {
          cancelled = true;
        },
      });
      return { stream };
    },
  };
}
