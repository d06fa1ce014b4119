import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { jsonFromSchema } from "./json-from-schema.ts";

export interface DevEchoOptions {
  /** Pause between streamed words (prompt param `delayMs`). */
  delayMs?: number;
}

const textOf = (message: LanguageModelV4Prompt[number]): string => {
  if (typeof message.content === "string") return message.content;
  let text = "";
  for (const part of message.content) if (part.type === "text") text += part.text;
  return text;
};

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

/** A JSON answer built from the schema, cut into JSON_PIECE_CHARS pieces. */
const jsonPieces = (schema: unknown, text: string): string[] => {
  const json = JSON.stringify(jsonFromSchema(schema, text));
  const pieces: string[] = [];
  for (let start = 0; start < json.length; start += JSON_PIECE_CHARS)
    pieces.push(json.slice(start, start + JSON_PIECE_CHARS));
  return pieces;
};

/** What dev:echo answers: the echoed message as word pieces, or JSON for an output schema. */
const answerOf = (call: LanguageModelV4CallOptions): { pieces: string[]; json: boolean } => {
  const text = echoedText(lastUserText(call.prompt));
  const schema = outputSchemaOf(call);
  return schema === undefined
    ? { pieces: echoPieces(text), json: false }
    : { pieces: jsonPieces(schema, text), json: true };
};

const lastUserText = (prompt: LanguageModelV4Prompt): string => {
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index]!;
    if (message.role === "user") return textOf(message);
  }
  return "";
};

const usageOf = (prompt: LanguageModelV4Prompt, outputWords: number): LanguageModelV4Usage => {
  const inputWords = prompt.reduce((sum, message) => sum + countWords(textOf(message)), 0);
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

/**
 * `dev:echo`: a deterministic development model (never a real one). Streams back the last user
 * message (its first DEV_ECHO_MAX_CHARS characters) word by word, waiting `delayMs` between
 * words, and reports word counts as usage (input: words of every prompt message; output: words
 * streamed). A call with an output schema gets JSON built from the schema instead
 * (json-from-schema.ts), in JSON_PIECE_CHARS pieces counted as one output token each.
 * PROMPTRUN_DEV_MODEL=false turns it off (see known-providers.ts).
 */
export function createDevEchoModel(options: DevEchoOptions = {}): LanguageModelV4 {
  const delayMs = options.delayMs ?? 0;
  return {
    specificationVersion: "v4",
    provider: "dev",
    modelId: "echo",
    supportedUrls: {},

    async doGenerate(call: LanguageModelV4CallOptions) {
      const { pieces, json } = answerOf(call);
      const text = pieces.join("");
      await pause(delayMs * Math.max(0, pieces.length - 1), call.abortSignal);
      return {
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usageOf(call.prompt, json ? pieces.length : countWords(text)),
        warnings: [],
      };
    },

    async doStream(call: LanguageModelV4CallOptions) {
      const signal = call.abortSignal;
      if (signal?.aborted) throw abortError(signal);
      const { pieces, json } = answerOf(call);
      let cancelled = false;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          try {
            controller.enqueue({ type: "stream-start", warnings: [] });
            controller.enqueue({ type: "response-metadata", modelId: "echo" });
            controller.enqueue({ type: "text-start", id: "0" });
            let outputWords = 0;
            for (const [index, piece] of pieces.entries()) {
              if (index > 0 && delayMs > 0) await pause(delayMs, signal);
              else if (index > 0 && index % PIECES_PER_YIELD === 0) await yieldToLoop();
              if (cancelled) return;
              if (signal?.aborted) throw abortError(signal);
              controller.enqueue({ type: "text-delta", id: "0", delta: piece });
              outputWords += json ? 1 : countWords(piece);
            }
            controller.enqueue({ type: "text-end", id: "0" });
            controller.enqueue({
              type: "finish",
              usage: usageOf(call.prompt, outputWords),
              finishReason: { unified: "stop", raw: "stop" },
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
