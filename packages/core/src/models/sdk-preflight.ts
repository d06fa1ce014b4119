import type { LanguageModelV4, LanguageModelV4CallOptions, SharedV4Warning } from "@ai-sdk/provider";

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
