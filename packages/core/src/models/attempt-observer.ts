import type { LanguageModelV4, LanguageModelV4StreamPart, LanguageModelV4Usage } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";

/** What one provider call was seen to consume, even when it failed half-way. */
export interface AttemptObservation {
  /** Usage the provider reported in its finish part. */
  reportedUsage: LanguageModelV4Usage | null;
  /** Prompt tokens announced at the start of the stream (Anthropic's message_start), if any. */
  announcedInputTokens: number | null;
  /** Non-empty text chunks received (≈ output tokens when no usage was reported). */
  textChunks: number;
}

const numberAt = (value: unknown, key: string): number => {
  if (typeof value !== "object" || value === null || !(key in value)) return 0;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === "number" && Number.isFinite(field) ? field : 0;
};

/** Anthropic reports prompt usage up front; the AI SDK passes it on as a custom part. */
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

/**
 * Wraps a model with a middleware that sees every provider chunk of one attempt: it reports
 * activity (idle-timeout watchdog) and records usage, so failed attempts can be costed too.
 */
export function observeAttempt(
  model: LanguageModelV4,
  onActivity: () => void,
): { model: LanguageModelV4; observation: AttemptObservation } {
  const observation: AttemptObservation = { reportedUsage: null, announcedInputTokens: null, textChunks: 0 };
  const observed = wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v4",
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        onActivity();
        const watch = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
          transform(part, controller) {
            onActivity();
            if (part.type === "text-delta" && part.delta.length > 0) observation.textChunks++;
            else if (part.type === "finish") observation.reportedUsage = part.usage;
            else if (part.type === "custom") observation.announcedInputTokens ??= announcedInput(part);
            controller.enqueue(part);
          },
        });
        return { ...result, stream: result.stream.pipeThrough(watch) };
      },
    },
  });
  return { model: observed, observation };
}
