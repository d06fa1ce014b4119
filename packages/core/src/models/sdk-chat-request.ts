import type { LanguageModelV4, LanguageModelV4CallOptions, SharedV4Warning } from "@ai-sdk/provider";

/**
 * The lean path's only reach into the AI SDK chat model's private parts (`getArgs`, `config`;
 * sdk-preflight.ts reads `getArgs` warnings for calls off the lean path),
 * so the lean stream reader sends exactly the request the SDK would. They are not public API:
 * `sdk-chat-request.test.ts` compares what this builds with what the SDK model itself sends, so
 * an SDK upgrade that moves them fails there, loudly (docs/PERFORMANCE.md). The one difference:
 * the SDK appends its utils version and the runtime to the user agent as it sends; this carries
 * the provider's part only.
 */
interface SdkChatModelInternals {
  getArgs(
    options: LanguageModelV4CallOptions,
  ): Promise<{ args: object; warnings: SharedV4Warning[]; metadataKey?: string }>;
  config: {
    url(options: { modelId: string; path: string }): string;
    headers?: unknown;
    requestModelId?: string;
  };
}

/** A streaming chat-completions request, as the SDK model would send it. */
export interface SdkChatRequest {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  warnings: SharedV4Warning[];
  /** The provider-metadata key the compatible provider reports under, if it names one. */
  metadataKey: string | undefined;
}

export type SdkChatRequestBuilder = (callOptions: LanguageModelV4CallOptions) => Promise<SdkChatRequest>;

/**
 * Builds `model`'s streaming request with its own request builder, or undefined when the model
 * has none where it is looked for (another provider, or an SDK that moved it).
 */
export function sdkChatRequestBuilder(
  model: LanguageModelV4,
  options: { includeUsage: boolean },
): SdkChatRequestBuilder | undefined {
  const internals = model as unknown as Partial<SdkChatModelInternals>;
  if (typeof internals.getArgs !== "function" || typeof internals.config?.url !== "function")
    return undefined;
  const { getArgs, config } = internals as SdkChatModelInternals;
  return async (callOptions) => {
    const { args, warnings, metadataKey } = await getArgs.call(model, callOptions);
    const body = {
      ...args,
      stream: true,
      stream_options: options.includeUsage ? { include_usage: true } : undefined,
    };
    const url = config.url({ path: "/chat/completions", modelId: config.requestModelId ?? model.modelId });
    const configHeaders = config.headers;
    const sdkHeaders = (await (typeof configHeaders === "function" ? configHeaders() : configHeaders)) as
      | Record<string, string | undefined>
      | undefined;
    const headers: Record<string, string> = {};
    for (const source of [{ "Content-Type": "application/json" }, sdkHeaders, callOptions.headers]) {
      for (const [name, value] of Object.entries(source ?? {}))
        if (value !== undefined) headers[name] = value;
    }
    return { url, headers, body, warnings, metadataKey };
  };
}
