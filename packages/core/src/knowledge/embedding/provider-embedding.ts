/**
 * An embedding model behind an AI SDK provider (OpenAI or an OpenAI-compatible endpoint): texts
 * go out in batches through `embedMany` (which retries retryable failures, honouring
 * retry-after), vectors come back L2-normalised, tokens from the provider's usage, cost from the
 * price data (docs/KNOWLEDGE.md, "Embedding models").
 */
import type { EmbeddingModelV4 } from "@ai-sdk/provider";
import { embedMany } from "ai";
import { EmbeddingError, type EmbeddingModel, type EmbeddingResult } from "../ports.ts";
import { normalise } from "./dev-hash.ts";
import { addCosts, embeddingCost } from "./embedding-price.ts";

export interface ProviderEmbeddingOptions {
  /** `provider:model`. */
  ref: string;
  sdkModel: EmbeddingModelV4;
  /** Texts per request (config knowledge.embeddingBatchSize). */
  batchSize: number;
  /** Retries per request after the first attempt. */
  maxRetries: number;
  /** US dollars per million input tokens at a time; null when unknown. */
  pricePerMillion: (at: Date) => number | null;
  /** Credentials: never in an error message. */
  secrets: string[];
}

const redact = (message: string, secrets: string[]): string =>
  secrets.reduce((text, secret) => (secret ? text.split(secret).join("[redacted]") : text), message);

function toVectors(embeddings: number[][], expected: number, ref: string): Float32Array[] {
  if (embeddings.length !== expected)
    throw new EmbeddingError(`${ref} returned ${embeddings.length} embeddings for ${expected} texts`);
  return embeddings.map((embedding) => normalise(Float32Array.from(embedding)));
}

export function createProviderEmbeddingModel(options: ProviderEmbeddingOptions): EmbeddingModel {
  const { ref, sdkModel, secrets } = options;
  const batchSize = Math.max(1, Math.floor(options.batchSize));

  const embedBatch = async (values: string[], signal: AbortSignal | undefined) => {
    try {
      return await embedMany({
        model: sdkModel,
        values,
        maxRetries: options.maxRetries,
        maxParallelCalls: 1,
        ...(signal ? { abortSignal: signal } : {}),
      });
    } catch (error) {
      // An abort is the caller's decision (lease lost, shutdown), not the model's failure.
      if (signal?.aborted) throw signal.reason ?? error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new EmbeddingError(`embedding with ${ref} failed: ${redact(reason, secrets)}`, { cause: error });
    }
  };

  return {
    ref,
    async embed(texts, embedOptions): Promise<EmbeddingResult> {
      const result: EmbeddingResult = { vectors: [], tokens: 0, cost: embeddingCost(0, 0) };
      let dimensions: number | undefined;
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = texts.slice(start, start + batchSize);
        const response = await embedBatch(batch, embedOptions?.signal);
        const vectors = toVectors(response.embeddings, batch.length, ref);
        for (const vector of vectors) {
          dimensions ??= vector.length;
          if (vector.length !== dimensions || dimensions === 0)
            throw new EmbeddingError(
              `${ref} returned vectors of ${vector.length} and ${dimensions} dimensions`,
            );
          result.vectors.push(vector);
        }
        const tokens = response.usage?.tokens ?? 0;
        result.tokens += tokens;
        result.cost = addCosts(result.cost, embeddingCost(options.pricePerMillion(new Date()), tokens));
      }
      return result;
    },
  };
}
