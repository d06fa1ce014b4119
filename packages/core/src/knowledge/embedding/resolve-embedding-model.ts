/**
 * `provider:model` → an embedding model (docs/KNOWLEDGE.md, "Embedding models"): `dev:hash`
 * (built in, when the development model is on), `openai:<model>`, and `<name>:<model>` for each
 * OpenAI-compatible endpoint of PROMPTRUN_PROVIDERS. Ingestion has no environment, so only the
 * server's credentials apply (not a tenant's env vars).
 */
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { EmbeddingModelV4 } from "@ai-sdk/provider";
import type { PromptrunConfig } from "../../config.ts";
import { invalid, PromptrunError } from "../../errors.ts";
import { parseModelRef } from "../../models/model-ref.ts";
import { resolveProviderCredentials } from "../../models/provider-credentials.ts";
import { EmbeddingError, type EmbeddingModel, type EmbeddingModelResolver } from "../ports.ts";
import { createDevHashModel } from "./dev-hash.ts";
import { embeddingPricePerMillion } from "./embedding-price.ts";
import { createProviderEmbeddingModel } from "./provider-embedding.ts";

export type EmbeddingConfig = Pick<PromptrunConfig, "devModel" | "providers" | "priceOverrides"> & {
  knowledge: Pick<PromptrunConfig["knowledge"], "embeddingBatchSize">;
};

export interface EmbeddingResolverOptions {
  config: EmbeddingConfig;
  /** Transport for provider calls (tests pass their own). */
  fetch?: typeof fetch;
  /** The `dev:hash` model (default: the built-in one). */
  devModel?: EmbeddingModel;
  /** Retries of one embedding request after its first attempt (default 3). */
  maxRetries?: number;
}

const OPENAI_DEFAULT_URL = "https://api.openai.com/v1";
const DEFAULT_MAX_RETRIES = 3;
const MAX_CACHED_MODELS = 256;

interface Target {
  provider: string;
  model: string;
  /** How to build the SDK model; absent for dev:hash. */
  build?: (transport: typeof globalThis.fetch) => { sdkModel: EmbeddingModelV4; secrets: string[] };
}

const knownList = (config: EmbeddingConfig): string =>
  [
    ...(config.devModel ? ["dev (dev:hash)"] : []),
    "openai",
    ...config.providers.compatible.map((endpoint) => endpoint.name),
  ].join(", ");

/** What `ref` names; PromptrunError("invalid") when this server cannot embed with it. */
function targetOf(ref: string, config: EmbeddingConfig): Target {
  const { provider, model } = parseModelRef(ref);
  if (provider === "dev") {
    if (model !== "hash")
      throw invalid(`unknown dev embedding model '${ref}' (dev:hash is the built-in one)`);
    if (!config.devModel)
      throw invalid(
        `embedding model '${ref}': the development models are turned off on this server (PROMPTRUN_DEV_MODEL=false)`,
      );
    return { provider, model };
  }
  if (provider === "openai") {
    return {
      provider,
      model,
      build: (transport) => {
        const credentials = resolveProviderCredentials(
          { name: provider, server: config.providers.openai, keyRequired: true },
          {},
        );
        const openai = createOpenAI({
          apiKey: credentials.apiKey,
          baseURL: credentials.baseUrl ?? OPENAI_DEFAULT_URL,
          fetch: transport,
        });
        return { sdkModel: openai.embedding(model), secrets: credentials.apiKey ? [credentials.apiKey] : [] };
      },
    };
  }
  const endpoint = config.providers.compatible.find((candidate) => candidate.name === provider);
  if (!endpoint) {
    const why =
      provider === "anthropic"
        ? "anthropic has no embedding models"
        : `unknown embedding provider '${provider}'`;
    throw invalid(`embedding model '${ref}': ${why} (known: ${knownList(config)})`);
  }
  return {
    provider,
    model,
    build: (transport) => {
      const compatible = createOpenAICompatible({
        name: provider,
        baseURL: endpoint.baseUrl,
        ...(endpoint.apiKey ? { apiKey: endpoint.apiKey } : {}),
        fetch: transport,
      });
      return {
        sdkModel: compatible.embeddingModel(model),
        secrets: endpoint.apiKey ? [endpoint.apiKey] : [],
      };
    },
  };
}

/**
 * Checks a knowledge base's `embeddingModel` when it is created: PromptrunError("invalid") (400)
 * for a malformed ref, an unknown provider, `dev:hash` while the development model is off, or
 * OpenAI without a key configured.
 */
export function validateEmbeddingModelRef(ref: string, config: EmbeddingConfig): void {
  const target = targetOf(ref, config);
  target.build?.(globalThis.fetch);
}

export function createEmbeddingModelResolver(options: EmbeddingResolverOptions): EmbeddingModelResolver {
  const { config } = options;
  const transport = options.fetch ?? globalThis.fetch;
  const devModel = options.devModel ?? createDevHashModel();
  const cache = new Map<string, EmbeddingModel>();

  const build = (ref: string): EmbeddingModel => {
    const target = targetOf(ref, config);
    if (!target.build) return devModel;
    const { sdkModel, secrets } = target.build(transport);
    return createProviderEmbeddingModel({
      ref,
      sdkModel,
      batchSize: config.knowledge.embeddingBatchSize,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      pricePerMillion: (at) => embeddingPricePerMillion(ref, config.priceOverrides, at),
      secrets,
    });
  };

  return (ref) => {
    const cached = cache.get(ref);
    if (cached) return cached;
    let model: EmbeddingModel;
    try {
      model = build(ref);
    } catch (error) {
      if (PromptrunError.isInstance(error)) throw new EmbeddingError(error.message, { cause: error });
      throw error;
    }
    if (cache.size >= MAX_CACHED_MODELS) cache.clear();
    cache.set(ref, model);
    return model;
  };
}
