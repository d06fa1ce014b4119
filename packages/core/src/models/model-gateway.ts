import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { PromptParams } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { invalid } from "../errors.ts";
import { assertPublicUrl, createGuardedFetch } from "../security/url-guard.ts";
import { capResponseBodies } from "./capped-response-fetch.ts";
import { createDevEchoModel } from "./dev-echo-model.ts";
import { assertKnownModel } from "./known-providers.ts";
import { createLeanChatStreamModel } from "./lean-chat-stream-model.ts";
import { parseModelRef } from "./model-ref.ts";
import { envPrefixOf, type ProviderCredentials, resolveProviderCredentials } from "./provider-credentials.ts";
import { createUrlDownloader, type UrlDownloader } from "./url-download.ts";

export interface ModelRequest {
  /** `provider:model` */
  modelRef: string;
  /** The tenant's variables: environment env vars overlaid with the run's envVars. */
  tenantEnv: Record<string, string>;
  params: PromptParams;
}

export interface ResolvedModel {
  model: LanguageModelV4;
  provider: string;
  modelId: string;
  /** Credentials in use: redacted from any error message. */
  secrets: string[];
  /** Fetches an image/file URL the model cannot take as a URL (none for dev:echo, which needs no bytes). */
  download?: UrlDownloader;
}

/** Turns a model ref into an AI SDK model; rejects with PromptrunError("invalid") on config problems. */
export interface ModelGateway {
  resolve(request: ModelRequest): Promise<ResolvedModel>;
}

export interface ModelGatewayOptions {
  config: Pick<PromptrunConfig, "providers" | "allowPrivateUrls" | "devModel"> & {
    run: Pick<PromptrunConfig["run"], "maxResponseBytes" | "maxResponseLineBytes">;
  };
  /** Transport for provider calls (tests inject one); tenant URLs get the private-range guard on top. */
  fetch?: typeof fetch;
}

const OPENAI_DEFAULT_URL = "https://api.openai.com/v1";
/** Built chat models kept for reuse; past this many distinct ones the cache starts over. */
const MAX_CACHED_CHAT_MODELS = 512;
const ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com/v1";

/**
 * `openai:*` → chat completions, `anthropic:*` → messages, `<name>:*` → each configured
 * OpenAI-compatible endpoint, `dev:echo` → the built-in development model.
 */
export function createModelGateway(options: ModelGatewayOptions): ModelGateway {
  const { config } = options;
  const rawFetch = options.fetch ?? globalThis.fetch;
  // Every provider response is counted as it is read, whichever transport carries it.
  const caps = { maxBodyBytes: config.run.maxResponseBytes, maxLineBytes: config.run.maxResponseLineBytes };
  const baseFetch = capResponseBodies(rawFetch, caps);
  const guardedFetch = capResponseBodies(
    createGuardedFetch({ allowPrivate: config.allowPrivateUrls, fetch: rawFetch }),
    caps,
  );

  /** Tenant URLs are checked now (clear error) and again at connect time (DNS rebinding). */
  const transportFor = async (provider: string, credentials: ProviderCredentials): Promise<typeof fetch> => {
    if (!credentials.tenantBaseUrl || !credentials.baseUrl) return baseFetch;
    await assertPublicUrl(credentials.baseUrl, {
      allowPrivate: config.allowPrivateUrls,
      field: `${envPrefixOf(provider)}_BASE_URL`,
    });
    return guardedFetch;
  };

  // File URLs are tenant URLs whoever's key the run uses: always through the guard, never capped
  // by the provider-response caps (the downloader has its own).
  const download = createUrlDownloader({ allowPrivate: config.allowPrivateUrls, fetch: rawFetch });

  const secretsOf = (credentials: ProviderCredentials) => (credentials.apiKey ? [credentials.apiKey] : []);

  // Building an OpenAI-compatible SDK model builds its zod chunk schemas (≈ 5 % of the server's
  // CPU at 100 streams when done per run); models hold no per-call state, so one serves many runs.
  const chatModels = new Map<string, LanguageModelV4>();
  const cachedChatModel = (
    provider: string,
    model: string,
    credentials: ProviderCredentials,
    transport: typeof fetch,
    build: () => LanguageModelV4,
  ): LanguageModelV4 => {
    const transportKind = transport === baseFetch ? "direct" : "guarded";
    const key = JSON.stringify([provider, model, credentials.apiKey, credentials.baseUrl, transportKind]);
    let built = chatModels.get(key);
    if (!built) {
      if (chatModels.size >= MAX_CACHED_CHAT_MODELS) chatModels.clear();
      built = build();
      chatModels.set(key, built);
    }
    return built;
  };

  return {
    async resolve({ modelRef, tenantEnv, params }) {
      assertKnownModel(modelRef, config);
      const { provider, model } = parseModelRef(modelRef);
      if (provider === "dev") {
        return {
          model: createDevEchoModel({ delayMs: params.delayMs }),
          provider,
          modelId: model,
          secrets: [],
        };
      }
      if (provider === "openai") {
        const credentials = resolveProviderCredentials(
          { name: provider, server: config.providers.openai, keyRequired: true },
          tenantEnv,
        );
        const transport = await transportFor(provider, credentials);
        const lean = cachedChatModel(provider, model, credentials, transport, () =>
          createLeanChatStreamModel({
            sdkModel: createOpenAI({
              apiKey: credentials.apiKey,
              baseURL: credentials.baseUrl ?? OPENAI_DEFAULT_URL,
              fetch: transport,
            }).chat(model),
            flavor: "openai",
            includeUsage: true,
            fetch: transport,
          }),
        );
        return { model: lean, provider, modelId: model, secrets: secretsOf(credentials), download };
      }
      if (provider === "anthropic") {
        const credentials = resolveProviderCredentials(
          { name: provider, server: config.providers.anthropic, keyRequired: true },
          tenantEnv,
        );
        const anthropic = createAnthropic({
          apiKey: credentials.apiKey,
          baseURL: credentials.baseUrl ?? ANTHROPIC_DEFAULT_URL,
          fetch: await transportFor(provider, credentials),
        });
        return {
          model: anthropic(model),
          provider,
          modelId: model,
          secrets: secretsOf(credentials),
          download,
        };
      }
      const endpoint = config.providers.compatible.find((candidate) => candidate.name === provider);
      if (!endpoint) throw invalid(`unknown model provider '${provider}'`); // assertKnownModel caught it
      const credentials = resolveProviderCredentials(
        {
          name: provider,
          server: { apiKey: endpoint.apiKey, baseUrl: endpoint.baseUrl },
          keyRequired: false,
        },
        tenantEnv,
      );
      const transport = await transportFor(provider, credentials);
      return {
        model: cachedChatModel(provider, model, credentials, transport, () =>
          createLeanChatStreamModel({
            sdkModel: createOpenAICompatible({
              name: provider,
              baseURL: credentials.baseUrl ?? endpoint.baseUrl,
              apiKey: credentials.apiKey,
              includeUsage: true,
              // OpenAI-compatible servers get `response_format: json_schema` as OpenAI does.
              supportsStructuredOutputs: true,
              fetch: transport,
            }).chatModel(model),
            flavor: "compatible",
            includeUsage: true,
            fetch: transport,
          }),
        ),
        provider,
        modelId: model,
        secrets: secretsOf(credentials),
        download,
      };
    },
  };
}
