import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4FinishReason,
  type LanguageModelV4StreamPart,
  type LanguageModelV4StreamResult,
  type LanguageModelV4Usage,
  TypeValidationError,
} from "@ai-sdk/provider";
import { createParser } from "eventsource-parser";
import { sdkChatRequestBuilder, WRAPPED_SDK_MODEL } from "./sdk-chat-request.ts";

/**
 * Which AI SDK provider the lean reader stands in for: they differ in how a stream without a
 * finish reason and an error frame surface, and the engine must see the same either way.
 */
export type ChatStreamFlavor = "openai" | "compatible";

/**
 * Only plain text prompts without tools, structured output, reasoning, provider options, file
 * parts or raw chunks take the lean path; anything else goes to the SDK model, which knows all of it.
 */
const leanPathFits = (options: LanguageModelV4CallOptions): boolean =>
  !options.tools?.length &&
  (options.reasoning === undefined || options.reasoning === "provider-default") &&
  options.toolChoice === undefined &&
  (options.responseFormat === undefined || options.responseFormat.type === "text") &&
  options.providerOptions === undefined &&
  !options.includeRawChunks &&
  options.prompt.every(
    (message) =>
      message.role === "system" ||
      (message.role !== "tool" && message.content.every((part) => part.type === "text")),
  );

const RETRYABLE_NETWORK_ERROR_CODES = new Set([
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

const isAbortError = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === "AbortError" || error.name === "ResponseAborted" || error.name === "TimeoutError");

const hasNetworkCode = (error: unknown): boolean => {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === "string" && RETRYABLE_NETWORK_ERROR_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
};

/** As the SDK's handleFetchError: connection failures become retryable APICallErrors. */
const fetchFailure = (error: unknown, url: string, requestBodyValues: unknown): unknown => {
  if (isAbortError(error)) return error;
  const failedToFetch =
    error instanceof TypeError && ["fetch failed", "failed to fetch"].includes(error.message.toLowerCase());
  if (failedToFetch && error.cause != null) {
    const cause = error.cause as { message?: unknown };
    return new APICallError({
      message: `Cannot connect to API: ${String(cause.message)}`,
      cause,
      url,
      requestBodyValues,
      isRetryable: true,
    });
  }
  if (!hasNetworkCode(error)) return error;
  if (APICallError.isInstance(error)) {
    return new APICallError({
      message: error.message,
      cause: error.cause,
      url: error.url,
      requestBodyValues: error.requestBodyValues,
      statusCode: error.statusCode,
      responseHeaders: error.responseHeaders,
      responseBody: error.responseBody,
      data: error.data,
      isRetryable: true,
    });
  }
  return new APICallError({
    message: `Cannot connect to API: ${(error as Error).message}`,
    cause: error,
    url,
    requestBodyValues,
    isRetryable: true,
  });
};

const headersOf = (response: Response): Record<string, string> => Object.fromEntries(response.headers);

/** As the SDK's JSON error handler: the body's `error.message`, else the status text. */
const httpFailure = async (response: Response, url: string, requestBodyValues: unknown) => {
  const responseHeaders = headersOf(response);
  const responseBody = await response.text();
  const base = { url, requestBodyValues, statusCode: response.status, responseHeaders, responseBody };
  if (responseBody.trim() !== "") {
    try {
      const data = JSON.parse(responseBody) as { error?: { message?: unknown } } | null;
      if (typeof data?.error?.message === "string") {
        return new APICallError({ ...base, message: data.error.message, data });
      }
    } catch {
      // Not JSON: the status text stands in, as in the SDK.
    }
  }
  return new APICallError({ ...base, message: response.statusText });
};

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;

interface StreamErrorFrame {
  message: string;
  code: string | number | undefined;
  type: string | undefined;
}

/** OpenAI's error frames, read as the OpenAI provider reads them. */
const openAIErrorFrame = (frame: unknown): StreamErrorFrame | undefined => {
  const value = asRecord(frame);
  if (!value) return undefined;
  const error = asRecord(value.error) ?? value;
  const code = typeof error.code === "string" || typeof error.code === "number" ? error.code : undefined;
  const type = typeof error.type === "string" ? error.type : undefined;
  const looksLikeError =
    asRecord(value.error) !== undefined || type !== undefined || "code" in error || "param" in error;
  return typeof error.message === "string" && looksLikeError
    ? { message: error.message, code, type }
    : undefined;
};

const isRetryableStatus = (status: number) =>
  status === 408 || status === 409 || status === 429 || status >= 500;

const openAIErrorStatus = ({ code, type }: StreamErrorFrame): number => {
  const explicit = typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : code;
  if (typeof explicit === "number" && Number.isInteger(explicit) && explicit >= 400 && explicit <= 599) {
    return explicit;
  }
  const said = [code, type]
    .filter((part) => part !== undefined)
    .join(" ")
    .toLowerCase();
  if (said.includes("insufficient_quota") || said.includes("rate_limit")) return 429;
  if (said.includes("authentication")) return 401;
  if (said.includes("permission")) return 403;
  if (said.includes("not_found")) return 404;
  if (["invalid", "bad_request", "context_length"].some((term) => said.includes(term))) return 400;
  if (said.includes("overload")) return 503;
  if (said.includes("timeout")) return 504;
  return 500;
};

/** The OpenAI provider's mid-stream error value (its ProviderStreamError shape and marker). */
const openAIStreamError = (frame: unknown) => {
  const parsed = openAIErrorFrame(frame);
  if (!parsed) return frame;
  const statusCode = openAIErrorStatus(parsed);
  const quota = parsed.code === "insufficient_quota" || parsed.type === "insufficient_quota";
  const error = {
    message: parsed.message,
    type: parsed.type,
    code: parsed.code,
    statusCode,
    isRetryable: !quota && isRetryableStatus(statusCode),
    data: frame,
  };
  Object.defineProperty(error, Symbol.for("vercel.ai.providerStreamError"), { value: true });
  return error;
};

/** What the OpenAI provider throws for an error frame that comes before any output. */
const openAIStreamFailure = (
  frame: unknown,
  url: string,
  requestBodyValues: unknown,
  responseHeaders: Record<string, string>,
) => {
  const streamError = openAIStreamError(frame) as {
    message?: string;
    statusCode?: number;
    isRetryable?: boolean;
  };
  return new APICallError({
    message: streamError.message ?? "OpenAI stream failed before any output was generated",
    url,
    requestBodyValues,
    statusCode: streamError.statusCode ?? 500,
    responseHeaders,
    responseBody: JSON.stringify(frame),
    data: frame,
    isRetryable: streamError.isRetryable,
  });
};

const mapFinishReason = (raw: string, hasRefusal: boolean): LanguageModelV4FinishReason["unified"] => {
  switch (raw) {
    case "stop":
      return hasRefusal ? "content-filter" : "stop";
    case "length":
      return "length";
    case "content_filter":
      return "content-filter";
    case "function_call":
    case "tool_calls":
      return "tool-calls";
    default:
      return "other";
  }
};

interface ChatUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

const usageFrom = (usage: ChatUsage | undefined, flavor: ChatStreamFlavor): LanguageModelV4Usage => {
  if (usage == null) {
    return {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
      raw: undefined,
    };
  }
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? 0;
  // Only the OpenAI provider reads cache writes.
  const cacheWrite =
    flavor === "openai" ? (usage.prompt_tokens_details?.cache_write_tokens ?? undefined) : undefined;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: { total: prompt, noCache: prompt - cacheRead - (cacheWrite ?? 0), cacheRead, cacheWrite },
    outputTokens: { total: completion, text: Math.max(0, completion - reasoning), reasoning },
    raw: usage as LanguageModelV4Usage["raw"],
  };
};

/** Text of a compatible server's `content`: a string, or a list of parts of which the text ones count. */
const textsOf = (content: unknown, flavor: ChatStreamFlavor): string[] => {
  if (typeof content === "string") {
    // The OpenAI provider passes an empty delta on; the compatible one drops it.
    return content.length > 0 || flavor === "openai" ? [content] : [];
  }
  if (flavor === "openai" || !Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const part of content) {
    const record = asRecord(part);
    if (record?.type === "text" && typeof record.text === "string" && record.text.length > 0) {
      texts.push(record.text);
    }
  }
  return texts;
};

export interface LeanChatStreamOptions {
  /** The AI SDK chat model this stands in for: builds the request, and serves what the lean path does not. */
  sdkModel: LanguageModelV4;
  flavor: ChatStreamFlavor;
  /** Whether `stream_options.include_usage` is sent (the SDK compatible provider's `includeUsage`). */
  includeUsage: boolean;
  fetch: typeof fetch;
}

/**
 * A chat-completions model whose `doStream` reads the SSE body with a plain parser, JSON.parse
 * and hand-written shape checks, where the AI SDK provider validates every chunk with zod (the
 * largest CPU cost at 100 streams). The request (URL, headers, body) is built by the SDK model
 * itself (`sdk-chat-request.ts`); everything outside plain text streaming is delegated to it.
 */
export function createLeanChatStreamModel(options: LeanChatStreamOptions): LanguageModelV4 {
  const { sdkModel, flavor, includeUsage } = options;
  const buildRequest = sdkChatRequestBuilder(sdkModel, { includeUsage });
  if (!buildRequest) return sdkModel;
  const textId = flavor === "openai" ? "0" : "txt-0";

  const doStream = async (callOptions: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> => {
    if (!leanPathFits(callOptions)) return sdkModel.doStream(callOptions);
    const { url, headers, body, warnings, metadataKey } = await buildRequest(callOptions);
    const providerMetadataKey = flavor === "openai" ? "openai" : (metadataKey ?? sdkModel.provider);

    let response: Response;
    try {
      response = await options.fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: callOptions.abortSignal,
      });
    } catch (error) {
      throw fetchFailure(error, url, body);
    }
    const responseHeaders = headersOf(response);
    if (!response.ok) throw await httpFailure(response, url, body);
    if (response.body == null) throw new EmptyResponseBodyError({});

    const bodyReader = response.body.getReader();
    const decoder = new TextDecoder();
    /** Parts produced by the bytes fed so far, handed out by `pull`. */
    let pending: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings }];
    let finishRaw: string | undefined;
    let finishedInError = false;
    let usage: ChatUsage | undefined;
    let textOpen = false;
    let hasRefusal = false;
    /** The OpenAI provider looks ahead to the first output, malformed chunk or error frame. */
    let peeking = flavor === "openai";
    let failureBeforeOutput: APICallError | undefined;
    let metadataSent = false;

    const pushText = (delta: string) => {
      if (!textOpen) {
        pending.push({ type: "text-start", id: textId });
        textOpen = true;
      }
      pending.push({ type: "text-delta", id: textId, delta });
    };

    // long-function: the per-chunk hot path, kept in one closure on purpose (docs/PERFORMANCE.md, lean reader).
    const onChunk = (data: string) => {
      if (data === "[DONE]") return;
      let value: unknown;
      try {
        value = JSON.parse(data);
      } catch (cause) {
        finishRaw = undefined;
        finishedInError = true;
        peeking = false;
        pending.push({ type: "error", error: new JSONParseError({ text: data, cause }) });
        return;
      }
      const chunk = asRecord(value);
      if (chunk && "error" in chunk) {
        finishRaw = undefined;
        finishedInError = true;
        if (flavor === "compatible") {
          pending.push({ type: "error", error: chunk.error });
        } else if (peeking) {
          failureBeforeOutput = openAIStreamFailure(chunk.error, url, body, responseHeaders);
        } else {
          pending.push({ type: "error", error: openAIStreamError(chunk.error) });
        }
        return;
      }
      if (!chunk || !Array.isArray(chunk.choices)) {
        finishRaw = undefined;
        finishedInError = true;
        peeking = false;
        pending.push({
          type: "error",
          error: new TypeValidationError({ value, cause: new Error("chunk without a choices array") }),
        });
        return;
      }
      if (!metadataSent) {
        const id = typeof chunk.id === "string" ? chunk.id : undefined;
        const modelId = typeof chunk.model === "string" ? chunk.model : undefined;
        const created =
          typeof chunk.created === "number" && chunk.created ? new Date(chunk.created * 1000) : undefined;
        if (id || modelId || created) {
          metadataSent = true;
          pending.push({ type: "response-metadata", id, modelId, timestamp: created });
        }
      }
      if (chunk.usage != null) usage = chunk.usage as ChatUsage;
      const choice = asRecord(chunk.choices[0]);
      if (typeof choice?.finish_reason === "string") finishRaw = choice.finish_reason;
      const delta = asRecord(choice?.delta);
      if (!delta) return;
      for (const text of textsOf(delta.content, flavor)) {
        if (text.length > 0) peeking = false;
        pushText(text);
      }
      if (typeof delta.refusal === "string" && delta.refusal.length > 0) {
        hasRefusal = true;
        peeking = false;
        pushText(delta.refusal);
      }
      if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) peeking = false;
    };

    const parser = createParser({ onEvent: (event) => onChunk(event.data) });

    const finish = () => {
      if (textOpen) pending.push({ type: "text-end", id: textId });
      let finishReason: LanguageModelV4FinishReason;
      if (finishRaw !== undefined) {
        finishReason = { unified: mapFinishReason(finishRaw, hasRefusal), raw: finishRaw };
      } else if (finishedInError) {
        finishReason = { unified: "error", raw: undefined };
      } else if (flavor === "openai") {
        // A clean end without the provider's completion signal.
        finishReason = { unified: "interrupted", raw: undefined };
      } else {
        finishReason = { unified: "error", raw: undefined };
        pending.push({
          type: "error",
          error: new InvalidResponseDataError({
            data: undefined,
            message: "Response stream ended without a finish reason.",
          }),
        });
      }
      pending.push({
        type: "finish",
        finishReason,
        usage: usageFrom(usage, flavor),
        providerMetadata: { [providerMetadataKey]: {} },
      });
    };

    let bodyDone = false;
    let bodyError: unknown;
    /** Reads one network chunk into `pending`; false once the body ended or failed. */
    const readBody = async (): Promise<boolean> => {
      if (bodyDone || bodyError !== undefined) return false;
      let read: Awaited<ReturnType<typeof bodyReader.read>>;
      try {
        read = await bodyReader.read();
      } catch (error) {
        bodyError = isAbortError(error)
          ? error
          : fetchFailure(
              new APICallError({
                message: "Failed to process successful response",
                cause: error,
                url,
                requestBodyValues: body,
                statusCode: response.status,
                responseHeaders,
              }),
              url,
              body,
            );
        return false;
      }
      if (read.done) {
        parser.feed(decoder.decode());
        parser.reset({ consume: true });
        finish();
        bodyDone = true;
        return false;
      }
      parser.feed(decoder.decode(read.value, { stream: true }));
      return true;
    };

    if (peeking) {
      // As the OpenAI provider: an error frame before any output fails the call itself.
      while (peeking && failureBeforeOutput === undefined && (await readBody()));
      peeking = false;
      if (failureBeforeOutput !== undefined) {
        bodyReader.cancel().catch(() => {});
        throw failureBeforeOutput;
      }
    }

    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      async pull(controller) {
        // A network chunk may hold only part of an event: read until a part is ready.
        while (pending.length === 0 && (await readBody()));
        const ready = pending;
        pending = [];
        for (const part of ready) controller.enqueue(part);
        // An error would drop the parts just queued: it is raised on the next pull.
        if (bodyError !== undefined && ready.length === 0) controller.error(bodyError);
        else if (bodyDone) controller.close();
      },
      cancel(reason) {
        return bodyReader.cancel(reason);
      },
    });

    return { stream, request: { body }, response: { headers: responseHeaders } };
  };

  return {
    specificationVersion: sdkModel.specificationVersion,
    provider: sdkModel.provider,
    modelId: sdkModel.modelId,
    supportedUrls: sdkModel.supportedUrls,
    doGenerate: (callOptions) => sdkModel.doGenerate(callOptions),
    doStream,
    // The request pre-flight of a call off the lean path asks the SDK model (sdk-chat-request.ts).
    [WRAPPED_SDK_MODEL]: sdkModel,
  } as LanguageModelV4;
}
