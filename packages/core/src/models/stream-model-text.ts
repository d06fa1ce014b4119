import type {
  LanguageModelV4,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4StreamPart,
  LanguageModelV4TextPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { PromptMessage, PromptParams } from "@promptrun/contract";

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
}

export interface StreamModelTextOptions {
  messages: PromptMessage[];
  params: PromptParams;
  signal: AbortSignal;
  /** Called once the response headers arrived and on every provider part (idle watchdog). */
  onActivity: () => void;
  /** Each non-empty text delta, in order. */
  onText: (delta: string) => void;
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

/** The text of a message: its content, or its text parts joined (system messages take text only). */
export const textOfContent = (content: PromptMessage["content"]): string =>
  typeof content === "string"
    ? content
    : content.map((part) => (part.type === "text" ? part.text : "")).join("");

const toProviderParts = (
  content: PromptMessage["content"],
): Array<LanguageModelV4TextPart | LanguageModelV4FilePart> => {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part): LanguageModelV4TextPart | LanguageModelV4FilePart => {
    if (part.type === "text") return { type: "text", text: part.text };
    const source = part.type === "image" ? part.image : part.file;
    const inline = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(source);
    return {
      type: "file",
      data: inline ? { type: "data", data: inline[2]! } : { type: "url", url: new URL(source) },
      mediaType:
        part.mediaType ?? inline?.[1] ?? (part.type === "image" ? "image/*" : "application/octet-stream"),
      ...(part.type === "file" && part.filename ? { filename: part.filename } : {}),
    };
  });
};

const toProviderPrompt = (messages: PromptMessage[]): LanguageModelV4Message[] =>
  messages.map((message): LanguageModelV4Message => {
    if (message.role === "system") return { role: "system", content: textOfContent(message.content) };
    return { role: message.role, content: toProviderParts(message.content) } as LanguageModelV4Message;
  });

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
  const { params, signal, onActivity, onText } = options;
  const { stream } = await model.doStream({
    prompt: toProviderPrompt(options.messages),
    abortSignal: signal,
    temperature: params.temperature,
    topP: params.topP,
    maxOutputTokens: params.maxOutputTokens,
    stopSequences: params.stopSequences,
    seed: params.seed,
  });
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
      } else if (part.type === "finish") {
        observation.reportedUsage = part.usage;
        observation.finishReason = part.finishReason.unified;
      } else if (part.type === "error") {
        observation.streamError ??= part.error;
      } else if (part.type === "custom") {
        observation.announcedInputTokens ??= announcedInput(part);
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
});
