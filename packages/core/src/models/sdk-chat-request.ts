import type { LanguageModelV4, LanguageModelV4CallOptions, SharedV4Warning } from "@ai-sdk/provider";

/**
 * The only module that reaches into the AI SDK models' private parts (`getArgs`, `config`): the
 * lean stream reader sends exactly the request the SDK would, and calls off the lean path learn
 * the SDK's warnings before anything is sent (`preflightWarnings`). They are not public API:
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

/** Where a wrapping model (the lean chat reader) keeps the AI SDK model it stands in for. */
export const WRAPPED_SDK_MODEL = Symbol.for("promptrun.wrappedSdkModel");

interface RequestBuilder {
  getArgs(options: object): Promise<{ warnings?: SharedV4Warning[] }>;
}

/**
 * The warnings the AI SDK model would send in its `stream-start` part, learned by building the
 * request with its own (private) request builder, without sending it: a dropped field then fails
 * the run before the provider is paid. Undefined when the model has no builder where it is looked
 * for (dev:echo, another provider, an SDK that moved it): the engine then checks the
 * `stream-start` part instead. `engine-prompt-fields.test.ts` asserts that nothing is sent for
 * such a field with the pinned SDK versions (docs/providers.md).
 */
export async function preflightWarnings(
  model: LanguageModelV4,
  call: LanguageModelV4CallOptions,
): Promise<SharedV4Warning[] | undefined> {
  const target = ((model as unknown as Record<symbol, unknown>)[WRAPPED_SDK_MODEL] ??
    model) as Partial<RequestBuilder>;
  if (typeof target.getArgs !== "function") return undefined;
  // The Anthropic builder also reads `stream` and the betas of the call's headers.
  const built = await target.getArgs.call(target, { ...call, stream: true, userSuppliedBetas: new Set() });
  return Array.isArray(built?.warnings) ? built.warnings : undefined;
}
