import type {
  JSONSchema7,
  JSONValue,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FilePart,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4StreamPart,
  LanguageModelV4TextPart,
  LanguageModelV4ToolCallPart,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type {
  ChatMessage,
  MemoryPart,
  OutputSpec,
  PromptParams,
  ProviderOptions,
  ToolChoice,
  ToolResultPart,
} from "@promptrun/contract";
import { invalid } from "../errors.ts";
import { textOfContent } from "../memory-window.ts";
import { assertModelTakesPromptFields, promptCallOptions } from "./call-options.ts";
import { assertNoDroppedFields, requestShapeError } from "./provider-warnings.ts";
import { preflightWarnings } from "./sdk-chat-request.ts";
import type { DownloadedFile, UrlDownloader } from "./url-download.ts";

/** What one provider call was seen to consume, even when it failed half-way. */
export interface AttemptObservation {
  /** Usage the provider reported in its finish part. */
  reportedUsage: LanguageModelV4Usage | null;
  /** Prompt tokens announced at the start of the stream (Anthropic's message_start), if any. */
  announcedInputTokens: number | null;
  /** Non-empty text chunks received (≈ output tokens when no usage was reported). */
  textChunks: number;
  /** The finish part's unified reason; null when the stream ended without one. */
  finishReason: string | null;
  /** First error part the provider streamed, if any. */
  streamError: unknown;
  /** The tool calls the model asked for, in order; `input` is the JSON text the model sent. */
  toolCalls: Array<{ id: string; name: string; input: string }>;
}

/** A tool the model is offered (core/src/tools). */
export interface ModelTool {
  name: string;
  description?: string | undefined;
  parameters: Record<string, unknown>;
}

export interface StreamModelTextOptions {
  messages: ChatMessage[];
  /** Offered tools (none: the call carries no tools). */
  tools?: readonly ModelTool[] | undefined;
  toolChoice?: ToolChoice | undefined;
  params: PromptParams;
  signal: AbortSignal;
  /** Called once the response headers arrived and on every provider part (idle watchdog). */
  onActivity: () => void;
  /** Each non-empty text delta, in order. */
  onText: (delta: string) => void;
  /** `provider:model`: with it, the prompt's output, reasoning and provider options are sent. */
  modelRef?: string;
  output?: OutputSpec | null | undefined;
  providerOptions?: ProviderOptions | null | undefined;
  /** Fetches an image/file URL the model cannot take as a URL (none: URLs are passed as they are). */
  download?: UrlDownloader;
  /** Downloads already made for this run, by URL (a retry does not fetch again). */
  downloads?: Map<string, Promise<DownloadedFile>>;
}

const numberAt = (value: unknown, key: string): number => {
  if (typeof value !== "object" || value === null || !(key in value)) return 0;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === "number" && Number.isFinite(field) ? field : 0;
};

/** Anthropic reports prompt usage up front; its provider passes it on as a custom part. */
const announcedInput = (part: LanguageModelV4StreamPart): number | null => {
  if (part.type !== "custom" || part.kind !== "anthropic.message_start") return null;
  const usage = (part.providerMetadata?.anthropic as Record<string, unknown> | undefined)?.usage;
  if (!usage) return null;
  return (
    numberAt(usage, "input_tokens") +
    numberAt(usage, "cache_read_input_tokens") +
    numberAt(usage, "cache_creation_input_tokens")
  );
};

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** An image/file part's URL; anything but an http(s) URL is refused (never retried). */
const webUrlOf = (source: string, kind: "image" | "file"): URL => {
  const url = URL.parse(source);
  if (url && (url.protocol === "https:" || url.protocol === "http:")) return url;
  throw invalid(
    `${kind === "image" ? "an image" : "a file"} part must be an https URL or a base64 data: URL`,
  );
};

type ProviderContentPart = LanguageModelV4TextPart | LanguageModelV4FilePart | LanguageModelV4ToolCallPart;

/** A tool result as the provider takes it: text or JSON, marked as an error when it is one. */
const toolResultOutput = (part: ToolResultPart): LanguageModelV4ToolResultOutput => {
  if (typeof part.output === "string")
    return { type: part.isError ? "error-text" : "text", value: part.output };
  return { type: part.isError ? "error-json" : "json", value: (part.output ?? null) as JSONValue };
};

const toProviderParts = (content: ChatMessage["content"]): ProviderContentPart[] => {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.flatMap((part: MemoryPart): ProviderContentPart[] => {
    if (part.type === "text") return [{ type: "text", text: part.text }];
    if (part.type === "tool-call")
      return [{ type: "tool-call", toolCallId: part.toolCallId, toolName: part.name, input: part.arguments }];
    if (part.type === "tool-result") return [];
    const source = part.type === "image" ? part.image : part.file;
    const inline = DATA_URL.exec(source);
    return [
      {
        type: "file",
        data: inline ? { type: "data", data: inline[2]! } : { type: "url", url: webUrlOf(source, part.type) },
        mediaType:
          part.mediaType ?? inline?.[1] ?? (part.type === "image" ? "image/*" : "application/octet-stream"),
        ...(part.type === "file" && part.filename ? { filename: part.filename } : {}),
      },
    ];
  });
};

const toProviderPrompt = (messages: ChatMessage[]): LanguageModelV4Message[] =>
  messages.map((message): LanguageModelV4Message => {
    if (message.role === "system") return { role: "system", content: textOfContent(message.content) };
    if (message.role === "tool") {
      const results = typeof message.content === "string" ? [] : message.content;
      return {
        role: "tool",
        content: results
          .filter((part): part is ToolResultPart => part.type === "tool-result")
          .map((part) => ({
            type: "tool-result",
            toolCallId: part.toolCallId,
            toolName: part.name,
            output: toolResultOutput(part),
          })),
      };
    }
    return { role: message.role, content: toProviderParts(message.content) } as LanguageModelV4Message;
  });

const toProviderTools = (tools: readonly ModelTool[]): LanguageModelV4FunctionTool[] =>
  tools.map((tool) => ({
    type: "function",
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.parameters as JSONSchema7,
  }));

const toProviderToolChoice = (choice: ToolChoice): LanguageModelV4ToolChoice =>
  typeof choice === "string" ? { type: choice } : { type: "tool", toolName: choice.name };

type SupportedUrls = Record<string, RegExp[]>;

/** Whether the model takes `url` of `mediaType` as a URL (the AI SDK's supportedUrls rule). */
function takesUrl(supportedUrls: SupportedUrls, mediaType: string, url: URL): boolean {
  const type = mediaType.toLowerCase();
  const topLevel = type.split("/")[0];
  for (const [pattern, regexes] of Object.entries(supportedUrls)) {
    const key = pattern.toLowerCase();
    const matches = key === "*" || key === "*/*" || key === type || key === `${topLevel}/*`;
    if (matches && regexes.some((regex) => regex.test(url.toString()))) return true;
  }
  return false;
}

/**
 * Replaces each URL part the model cannot take with the downloaded bytes (media type from the
 * response when the prompt did not name a precise one). Nothing to do: the prompt itself.
 */
async function resolveUrlParts(
  prompt: LanguageModelV4Message[],
  model: LanguageModelV4,
  options: StreamModelTextOptions,
): Promise<LanguageModelV4Message[]> {
  const { download } = options;
  if (!download) return prompt;
  const needsDownload = (part: { type: string; data?: unknown }): part is LanguageModelV4FilePart =>
    part.type === "file" && (part as LanguageModelV4FilePart).data.type === "url";
  const hasUrl = prompt.some(
    (message) =>
      message.role !== "system" && (message.content as Array<{ type: string }>).some(needsDownload),
  );
  if (!hasUrl) return prompt;
  const supportedUrls = (await model.supportedUrls) as SupportedUrls;
  const cache = options.downloads ?? new Map<string, Promise<DownloadedFile>>();
  const resolvePart = async <T extends { type: string }>(part: T): Promise<T> => {
    if (!needsDownload(part)) return part;
    const url = (part.data as { type: "url"; url: URL }).url;
    if (takesUrl(supportedUrls, part.mediaType, url)) return part;
    let pending = cache.get(url.toString());
    if (!pending) {
      pending = download(url, options.signal);
      pending.catch(() => cache.delete(url.toString()));
      cache.set(url.toString(), pending);
    }
    const file = await pending;
    const vague = part.mediaType.endsWith("/*") || part.mediaType === "application/octet-stream";
    const mediaType = vague && file.mediaType ? file.mediaType : part.mediaType;
    return { ...part, data: { type: "data", data: file.data }, mediaType } as T;
  };
  return Promise.all(
    prompt.map(async (message) =>
      message.role === "system"
        ? message
        : ({
            ...message,
            content: await Promise.all(message.content.map(resolvePart)),
          } as LanguageModelV4Message),
    ),
  );
}

/** The AI SDK call: messages (URLs the model cannot take downloaded), params and prompt fields. */
async function callOptionsFor(
  model: LanguageModelV4,
  options: StreamModelTextOptions,
): Promise<LanguageModelV4CallOptions> {
  const { params, modelRef } = options;
  const fields = modelRef
    ? { modelRef, params, output: options.output, providerOptions: options.providerOptions }
    : undefined;
  if (fields) assertModelTakesPromptFields(fields);
  const tools = options.tools && options.tools.length > 0 ? toProviderTools(options.tools) : undefined;
  return {
    prompt: await resolveUrlParts(toProviderPrompt(options.messages), model, options),
    ...(tools
      ? { tools, ...(options.toolChoice ? { toolChoice: toProviderToolChoice(options.toolChoice) } : {}) }
      : {}),
    abortSignal: options.signal,
    temperature: params.temperature,
    topP: params.topP,
    maxOutputTokens: params.maxOutputTokens,
    stopSequences: params.stopSequences,
    seed: params.seed,
    ...(fields ? promptCallOptions(fields) : {}),
  };
}

/**
 * One streamed provider call through the model's own `doStream` (the AI SDK provider layer),
 * without `streamText`: no per-part re-validation, no stitched TransformStreams, no retries (the
 * engine owns those). Resolves with what was observed; throws what `doStream` or the body
 * stream throws (HTTP errors, aborts, cut connections). The caller reads `observation` even
 * after a throw, to cost a failed attempt.
 */
export async function streamModelText(
  model: LanguageModelV4,
  options: StreamModelTextOptions,
  observation: AttemptObservation,
): Promise<void> {
  const { signal, onActivity, onText, modelRef } = options;
  const call = await callOptionsFor(model, options);
  let stream: ReadableStream<LanguageModelV4StreamPart>;
  try {
    // Only a call with prompt fields beyond plain text pays for the pre-flight.
    const asksMore = call.responseFormat || call.reasoning || call.providerOptions || call.tools;
    if (modelRef && asksMore)
      assertNoDroppedFields(modelRef, (await preflightWarnings(model, call)) ?? [], call);
    ({ stream } = await model.doStream(call));
  } catch (error) {
    throw modelRef ? requestShapeError(modelRef, error) : error;
  }
  onActivity();
  const reader = stream.getReader();
  // A body stuck in a read (a hung upstream) must not outlive the abort.
  const cancelReader = () => {
    reader.cancel(signal.reason).catch(() => {});
  };
  signal.addEventListener("abort", cancelReader, { once: true });
  try {
    if (signal.aborted) throw signal.reason;
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      onActivity();
      if (part.type === "text-delta") {
        if (part.delta.length === 0) continue;
        observation.textChunks++;
        onText(part.delta);
      } else if (part.type === "tool-call") {
        if (!part.providerExecuted)
          observation.toolCalls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
      } else if (part.type === "finish") {
        observation.reportedUsage = part.usage;
        observation.finishReason = part.finishReason.unified;
      } else if (part.type === "error") {
        observation.streamError ??= part.error;
      } else if (part.type === "custom") {
        observation.announcedInputTokens ??= announcedInput(part);
      } else if (part.type === "stream-start" && modelRef && part.warnings.length > 0) {
        try {
          assertNoDroppedFields(modelRef, part.warnings, call);
        } catch (error) {
          // Nothing more is read: the request is abandoned before its answer costs more.
          reader.cancel(error).catch(() => {});
          throw error;
        }
      }
    }
    if (signal.aborted) throw signal.reason;
  } finally {
    signal.removeEventListener("abort", cancelReader);
    reader.releaseLock();
  }
}

export const emptyObservation = (): AttemptObservation => ({
  reportedUsage: null,
  announcedInputTokens: null,
  textChunks: 0,
  finishReason: null,
  streamError: undefined,
  toolCalls: [],
});
