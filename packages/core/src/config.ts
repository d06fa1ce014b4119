import { DEFAULT_MEMORY_BOUND, type MemoryBound } from "./memory-window.ts";

/** Engine configuration, parsed and validated by the app (apps/server/src/env.ts) and passed in. */
export interface OpenAICompatibleEndpoint {
  /** Provider prefix used in model refs, e.g. `ollama` for `ollama:llama3.2`. */
  name: string;
  baseUrl: string;
  apiKey?: string;
}

export interface ModelPrice {
  /** US dollars per million tokens. */
  inputPerMillion: number;
  cachedInputPerMillion?: number;
  outputPerMillion: number;
  /** US dollars per web search call. */
  perWebSearch?: number;
}

export interface TenantQuotas {
  /** Unrevoked API keys. */
  apiKeys: number;
  /** Environments, `production` included. */
  environments: number;
  /** Webhooks across all environments. */
  webhooks: number;
  /** Prompt versions across all prompts (versions are immutable and never deleted). */
  promptVersions: number;
}

export const DEFAULT_TENANT_QUOTAS: TenantQuotas = {
  apiKeys: 50,
  environments: 20,
  webhooks: 100,
  promptVersions: 10_000,
};

export interface PromptrunConfig {
  /** At least 32 bytes of secret material: signs stream tokens, encrypts env vars. */
  secret: string;
  /** Previous secrets still accepted for decryption (key rotation). */
  previousSecrets: string[];
  /** Base of the stream `url` in a stream-token response. */
  streamUrl: string;
  streamTokenTtlSeconds: number;
  concurrency: number;
  tenantConcurrency: number;
  /**
   * Queued runs kept in memory at most (one instance, no cluster): deeper backlogs stay in the
   * store and are paged in as runs start (docs/ARCHITECTURE.md "Pending runs in memory").
   */
  queueMemoryRuns: number;
  /** Seconds between webhook attempts; its length + 1 is the number of attempts. */
  webhookRetrySchedule: number[];
  /** Consecutive failed deliveries after which a webhook is disabled. */
  webhookDisableAfter: number;
  /** One attempt, connect to end of response headers (Bun's fetch has no separate connect timeout). */
  webhookTimeoutMs: number;
  /** Webhook attempts in flight at once, in all. */
  webhookConcurrency: number;
  /** Webhook attempts in flight at once for one tenant (at most one per webhook). */
  webhookTenantConcurrency: number;
  /** Webhooks one environment may have (deleted ones do not count). */
  maxWebhooksPerEnvironment: number;
  rateLimit: { perSecond: number; burst: number };
  /** Queued (pending) runs a tenant may have at once. */
  maxPendingRunsPerTenant: number;
  /** Per-tenant caps on what a tenant can accumulate (see services/tenant-quotas.ts). */
  quotas: TenantQuotas;
  allowPrivateUrls: boolean;
  /** The built-in `dev:echo` model (PROMPTRUN_DEV_MODEL); off: pushing or running dev:* fails. */
  devModel: boolean;
  providers: {
    openai: { apiKey?: string; baseUrl?: string };
    anthropic: { apiKey?: string; baseUrl?: string };
    compatible: OpenAICompatibleEndpoint[];
  };
  /** `provider:model` → price, overriding the price data set. */
  priceOverrides: Record<string, ModelPrice>;
  /** Seconds of events kept per thread for Last-Event-ID resumption. */
  replayBufferSeconds: number;
  run: {
    maxAttempts: number;
    /** Whole-attempt timeout. */
    attemptTimeoutMs: number;
    /** No chunk from the provider for this long counts as a hang. */
    idleTimeoutMs: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    /** UTF-8 bytes of a run's output; past it the attempt ends and the run fails (not retried). */
    maxOutputBytes: number;
    /** Bytes of one provider response body (per attempt). */
    maxResponseBytes: number;
    /** Bytes of one line of a provider response (an SSE line, or a body without newlines). */
    maxResponseLineBytes: number;
  };
  /** How much of a channel's history a run loads as memory (newest whole exchanges). */
  memory: MemoryBound;
  /** Server-executed tools (http, mcp) and paused runs (docs/TOOLS.md). */
  tools: {
    /** One server tool call (an http request, an MCP call or listing), unless the tool sets its own. */
    timeoutMs: number;
    /** Bytes of an http tool's (or MCP server's) response read; the model gets at most 64 KB of it. */
    maxResponseBytes: number;
    /** How often expired pauses are looked for (each instance; the end is a compare-and-set). */
    pauseSweepMs: number;
  };
  /** Seconds after which a queued run gains one priority class (aging). */
  agingSeconds: number;
  idempotencyTtlSeconds: number;
  /** Knowledge bases (docs/KNOWLEDGE.md). */
  knowledge: {
    /** Bytes of one uploaded document; more is refused with 413 before the body is read. */
    maxUploadBytes: number;
    /** `provider:model` of a knowledge base created without `embeddingModel`. */
    defaultEmbeddingModel: string;
    /** Documents ingested at once by this instance. */
    ingestConcurrency: number;
    /** Ingestion attempts a document may start (a crash mid-ingestion counts) before it fails. */
    maxIngestAttempts: number;
    /** Texts per embedding request. */
    embeddingBatchSize: number;
    /** Characters of extracted text a document may have; more fails the document. */
    maxExtractedChars: number;
  };
}

/**
 * The engine's defaults: the one place they are written. apps/server/src/env.ts takes the
 * environment's defaults from here, and the README table and `.env.example` are generated from
 * env.ts (docs/ARCHITECTURE.md, "Configuration").
 */
export const defaultConfig = (
  overrides: Partial<PromptrunConfig> & Pick<PromptrunConfig, "secret">,
): PromptrunConfig => ({
  previousSecrets: [],
  streamUrl: "http://127.0.0.1:3000",
  streamTokenTtlSeconds: 300,
  concurrency: 32,
  tenantConcurrency: 8,
  queueMemoryRuns: 20_000,
  webhookRetrySchedule: [5, 300, 1800, 7200, 18000, 36000],
  webhookDisableAfter: 50,
  webhookTimeoutMs: 15_000,
  webhookConcurrency: 8,
  webhookTenantConcurrency: 2,
  maxWebhooksPerEnvironment: 20,
  rateLimit: { perSecond: 100, burst: 200 },
  maxPendingRunsPerTenant: 100_000,
  quotas: DEFAULT_TENANT_QUOTAS,
  allowPrivateUrls: false,
  devModel: true,
  providers: { openai: {}, anthropic: {}, compatible: [] },
  priceOverrides: {},
  replayBufferSeconds: 60,
  knowledge: {
    maxUploadBytes: 20 * 1024 * 1024,
    defaultEmbeddingModel: "dev:hash",
    ingestConcurrency: 2,
    maxIngestAttempts: 5,
    embeddingBatchSize: 96,
    maxExtractedChars: 10_000_000,
  },
  run: {
    maxAttempts: 4,
    attemptTimeoutMs: 600_000,
    idleTimeoutMs: 120_000,
    backoffBaseMs: 500,
    backoffMaxMs: 30_000,
    maxOutputBytes: 4 * 1024 * 1024,
    maxResponseBytes: 64 * 1024 * 1024,
    maxResponseLineBytes: 1024 * 1024,
  },
  memory: DEFAULT_MEMORY_BOUND,
  tools: { timeoutMs: 30_000, maxResponseBytes: 1024 * 1024, pauseSweepMs: 1_000 },
  agingSeconds: 30,
  idempotencyTtlSeconds: 86_400,
  ...overrides,
});
