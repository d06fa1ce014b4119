/**
 * The only reader of the environment. Parsed once at start; invalid configuration stops the
 * server with one line naming the variable.
 */
import { resolve } from "node:path";
import {
  type ApiConfig,
  type ConsoleConfig,
  DEFAULT_MAX_STREAMS_PER_THREAD,
  defaultApiConfig,
} from "@promptrun/api";
import {
  defaultConfig,
  type ModelPrice,
  type OpenAICompatibleEndpoint,
  type PromptrunConfig,
} from "@promptrun/core";
import { z } from "zod";

/** `provider:model` (the contract's embeddingModelRefSchema; the service checks the provider exists). */
const embeddingModelRef = z
  .string()
  .max(200)
  .regex(/^[a-z0-9][a-z0-9\-_]*:[^\s]+$/, "must be provider:model, e.g. openai:text-embedding-3-small");

const booleanString = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((value) => value === "true" || value === "1" || value === "yes");

const booleanText = (value: boolean) => (value ? "true" : "false");
const positiveInt = z.coerce.number().int().positive();
const absoluteUrl = z.url({ protocol: /^https?$/ }).transform((url) => url.replace(/\/+$/, ""));

/** `100/s,200` → 100 per second, burst 200 (also `6000/m`). */
const rateLimit = z
  .string()
  .regex(/^\d+(\.\d+)?\/(s|m|h)(,\d+)?$/, "must look like 100/s,200 (rate per s|m|h, optional burst)")
  .transform((text) => {
    const [rate, burst] = text.split(",");
    const [amount, unit] = rate!.split("/");
    const perSecond = Number(amount) / ({ s: 1, m: 60, h: 3600 } as const)[unit as "s" | "m" | "h"];
    return { perSecond, burst: burst ? Number(burst) : Math.max(1, Math.ceil(perSecond)) };
  });

/** `5,300,1800` → seconds between webhook attempts (decimals allowed for tests). */
const retrySchedule = z
  .string()
  .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, "must be comma-separated seconds, e.g. 5,300,1800")
  .transform((text) => text.split(",").map(Number));

/** `ollama=http://127.0.0.1:11434/v1,vllm=http://gpu:8000/v1` (optional `|API_KEY` after a URL). */
const compatibleProviders = z.string().transform((text, context): OpenAICompatibleEndpoint[] => {
  const endpoints: OpenAICompatibleEndpoint[] = [];
  for (const entry of text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = entry.match(/^([a-z0-9][a-z0-9\-_]*)=(https?:\/\/[^|]+)(?:\|(.+))?$/);
    if (!match || ["openai", "anthropic", "dev"].includes(match[1]!)) {
      context.addIssue({
        code: "custom",
        message: `entry '${entry.split("|")[0]}' must be name=http(s)://url (name not openai, anthropic or dev)`,
      });
      return z.NEVER;
    }
    endpoints.push({
      name: match[1]!,
      baseUrl: match[2]!.replace(/\/+$/, ""),
      ...(match[3] ? { apiKey: match[3] } : {}),
    });
  }
  return endpoints;
});

const modelPriceSchema = z.strictObject({
  inputPerMillion: z.number().nonnegative(),
  cachedInputPerMillion: z.number().nonnegative().optional(),
  outputPerMillion: z.number().nonnegative(),
  perWebSearch: z.number().nonnegative().optional(),
});
const priceOverrides = z.string().transform((text, context): Record<string, ModelPrice> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    context.addIssue({
      code: "custom",
      message: 'must be JSON: {"provider:model": {"inputPerMillion": …, "outputPerMillion": …}}',
    });
    return z.NEVER;
  }
  const result = z.record(z.string().regex(/^[a-z0-9\-_]+:.+$/), modelPriceSchema).safeParse(parsed);
  if (!result.success) {
    context.addIssue({
      code: "custom",
      message: `invalid price table: ${result.error.issues[0]?.message ?? "bad shape"}`,
    });
    return z.NEVER;
  }
  return result.data;
});

/** Where `bun run console:build` writes the console: found from this file, whatever the working directory. */
export const CONSOLE_DIST_DIR = resolve(import.meta.dir, "../../..", "apps/console/dist");

// main resolves the secret; the engine's other defaults are read here.
const { secret: _resolvedByMain, ...engineDefaults } = defaultConfig({ secret: "unused" });

/**
 * The default of every variable that has one, as one would write it in the environment: the one
 * source of defaults. The engine's come from core's `defaultConfig` and the transport's from
 * `@promptrun/api`; the rest are the server's own. Unset variables parse this text, so a default
 * passes the same validation as a value; the README table and `.env.example` are generated from it
 * (`bun run config-docs`, docs/ARCHITECTURE.md "Configuration").
 */
export const environmentDefaults = {
  PORT: "3000",
  HOST: "127.0.0.1",
  DATABASE_URL: "file:./data/promptrun.db",
  PROMPTRUN_REDIS_PREFIX: "promptrun",
  PROMPTRUN_RUN_LEASE_MS: "10000",
  PROMPTRUN_STREAM_TOKEN_TTL: String(engineDefaults.streamTokenTtlSeconds),
  PROMPTRUN_CONCURRENCY: String(engineDefaults.concurrency),
  PROMPTRUN_TENANT_CONCURRENCY: String(engineDefaults.tenantConcurrency),
  PROMPTRUN_QUEUE_MEMORY_RUNS: String(engineDefaults.queueMemoryRuns),
  PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: engineDefaults.webhookRetrySchedule.join(","),
  PROMPTRUN_WEBHOOK_TIMEOUT_MS: String(engineDefaults.webhookTimeoutMs),
  PROMPTRUN_WEBHOOK_CONCURRENCY: String(engineDefaults.webhookConcurrency),
  PROMPTRUN_WEBHOOK_TENANT_CONCURRENCY: String(engineDefaults.webhookTenantConcurrency),
  PROMPTRUN_MAX_WEBHOOKS_PER_ENVIRONMENT: String(engineDefaults.maxWebhooksPerEnvironment),
  PROMPTRUN_RATE_LIMIT: `${engineDefaults.rateLimit.perSecond}/s,${engineDefaults.rateLimit.burst}`,
  PROMPTRUN_MAX_PENDING_RUNS: String(engineDefaults.maxPendingRunsPerTenant),
  PROMPTRUN_MAX_API_KEYS: String(engineDefaults.quotas.apiKeys),
  PROMPTRUN_MAX_ENVIRONMENTS: String(engineDefaults.quotas.environments),
  PROMPTRUN_MAX_WEBHOOKS: String(engineDefaults.quotas.webhooks),
  PROMPTRUN_MAX_PROMPT_VERSIONS: String(engineDefaults.quotas.promptVersions),
  PROMPTRUN_MAX_STREAMS_PER_THREAD: String(DEFAULT_MAX_STREAMS_PER_THREAD),
  PROMPTRUN_HTTP_IDLE_TIMEOUT: "30",
  PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS: String(engineDefaults.run.idleTimeoutMs),
  PROMPTRUN_PROVIDER_TIMEOUT_MS: String(engineDefaults.run.attemptTimeoutMs),
  PROMPTRUN_MAX_OUTPUT_BYTES: String(engineDefaults.run.maxOutputBytes),
  PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES: String(engineDefaults.run.maxResponseBytes),
  PROMPTRUN_PROVIDER_MAX_LINE_BYTES: String(engineDefaults.run.maxResponseLineBytes),
  PROMPTRUN_ALLOW_PRIVATE_URLS: booleanText(engineDefaults.allowPrivateUrls),
  PROMPTRUN_PING_INTERVAL_MS: String(defaultApiConfig.pingIntervalMs),
  PROMPTRUN_MAX_BODY_BYTES: String(defaultApiConfig.maxBodyBytes),
  PROMPTRUN_MAX_UPLOAD_BYTES: String(engineDefaults.knowledge.maxUploadBytes),
  PROMPTRUN_EMBEDDING_MODEL: engineDefaults.knowledge.defaultEmbeddingModel,
  PROMPTRUN_INGEST_CONCURRENCY: String(engineDefaults.knowledge.ingestConcurrency),
  PROMPTRUN_REPLAY_BUFFER_SECONDS: String(engineDefaults.replayBufferSeconds),
  PROMPTRUN_TOOL_TIMEOUT_MS: String(engineDefaults.tools.timeoutMs),
  PROMPTRUN_TOOL_MAX_RESPONSE_BYTES: String(engineDefaults.tools.maxResponseBytes),
  PROMPTRUN_MAX_ATTEMPTS: String(engineDefaults.run.maxAttempts),
  PROMPTRUN_RETRY_BASE_MS: String(engineDefaults.run.backoffBaseMs),
  PROMPTRUN_SEED_DEMO: "true",
  PROMPTRUN_DEV_MODEL: booleanText(engineDefaults.devModel),
  PROMPTRUN_CONSOLE: "true",
  LOG_LEVEL: "info",
} as const;
const byDefault = environmentDefaults;

export const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).prefault(byDefault.PORT),
  HOST: z.string().min(1).prefault(byDefault.HOST),
  DATABASE_URL: z
    .string()
    .regex(/^(file:.+|:memory:|postgres(ql)?:\/\/.+)$/, "must be file:<path>, :memory: or postgres://…")
    .prefault(byDefault.DATABASE_URL),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/.+/, "must be redis://…")
    .optional(),
  PROMPTRUN_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  PROMPTRUN_PREVIOUS_SECRETS: z.string().optional(),
  PROMPTRUN_PUBLIC_URL: absoluteUrl.optional(),
  PROMPTRUN_STREAM_URL: absoluteUrl.optional(),
  PROMPTRUN_STREAM_TOKEN_TTL: positiveInt.max(86_400).prefault(byDefault.PROMPTRUN_STREAM_TOKEN_TTL),
  PROMPTRUN_CONCURRENCY: positiveInt.max(10_000).prefault(byDefault.PROMPTRUN_CONCURRENCY),
  PROMPTRUN_TENANT_CONCURRENCY: positiveInt.max(10_000).prefault(byDefault.PROMPTRUN_TENANT_CONCURRENCY),
  PROMPTRUN_QUEUE_MEMORY_RUNS: positiveInt
    .min(64)
    .max(10_000_000)
    .prefault(byDefault.PROMPTRUN_QUEUE_MEMORY_RUNS),
  PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: retrySchedule.prefault(byDefault.PROMPTRUN_WEBHOOK_RETRY_SCHEDULE),
  PROMPTRUN_WEBHOOK_TIMEOUT_MS: positiveInt
    .min(100)
    .max(600_000)
    .prefault(byDefault.PROMPTRUN_WEBHOOK_TIMEOUT_MS),
  PROMPTRUN_WEBHOOK_CONCURRENCY: positiveInt.max(10_000).prefault(byDefault.PROMPTRUN_WEBHOOK_CONCURRENCY),
  PROMPTRUN_WEBHOOK_TENANT_CONCURRENCY: positiveInt
    .max(10_000)
    .prefault(byDefault.PROMPTRUN_WEBHOOK_TENANT_CONCURRENCY),
  PROMPTRUN_MAX_WEBHOOKS_PER_ENVIRONMENT: positiveInt
    .max(10_000)
    .prefault(byDefault.PROMPTRUN_MAX_WEBHOOKS_PER_ENVIRONMENT),
  PROMPTRUN_RATE_LIMIT: rateLimit.prefault(byDefault.PROMPTRUN_RATE_LIMIT),
  PROMPTRUN_ALLOW_PRIVATE_URLS: booleanString.prefault(byDefault.PROMPTRUN_ALLOW_PRIVATE_URLS),
  PROMPTRUN_PROVIDERS: compatibleProviders.optional(),
  PROMPTRUN_PRICES: priceOverrides.optional(),
  PROMPTRUN_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  PROMPTRUN_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  PROMPTRUN_PING_INTERVAL_MS: positiveInt.prefault(byDefault.PROMPTRUN_PING_INTERVAL_MS),
  PROMPTRUN_MAX_BODY_BYTES: positiveInt
    .min(1_024)
    .max(1_073_741_824)
    .prefault(byDefault.PROMPTRUN_MAX_BODY_BYTES),
  PROMPTRUN_MAX_UPLOAD_BYTES: positiveInt
    .min(1_024)
    .max(1_073_741_824)
    .prefault(byDefault.PROMPTRUN_MAX_UPLOAD_BYTES),
  PROMPTRUN_EMBEDDING_MODEL: embeddingModelRef.prefault(byDefault.PROMPTRUN_EMBEDDING_MODEL),
  PROMPTRUN_INGEST_CONCURRENCY: positiveInt.max(64).prefault(byDefault.PROMPTRUN_INGEST_CONCURRENCY),
  PROMPTRUN_REPLAY_BUFFER_SECONDS: positiveInt.prefault(byDefault.PROMPTRUN_REPLAY_BUFFER_SECONDS),
  PROMPTRUN_TOOL_TIMEOUT_MS: positiveInt.max(600_000).prefault(byDefault.PROMPTRUN_TOOL_TIMEOUT_MS),
  PROMPTRUN_TOOL_MAX_RESPONSE_BYTES: positiveInt
    .max(64 * 1024 * 1024)
    .prefault(byDefault.PROMPTRUN_TOOL_MAX_RESPONSE_BYTES),
  PROMPTRUN_MAX_ATTEMPTS: positiveInt.max(20).prefault(byDefault.PROMPTRUN_MAX_ATTEMPTS),
  PROMPTRUN_RETRY_BASE_MS: positiveInt.prefault(byDefault.PROMPTRUN_RETRY_BASE_MS),
  PROMPTRUN_MAX_PENDING_RUNS: positiveInt.prefault(byDefault.PROMPTRUN_MAX_PENDING_RUNS),
  PROMPTRUN_MAX_API_KEYS: positiveInt.max(1_000_000).prefault(byDefault.PROMPTRUN_MAX_API_KEYS),
  PROMPTRUN_MAX_ENVIRONMENTS: positiveInt.max(1_000_000).prefault(byDefault.PROMPTRUN_MAX_ENVIRONMENTS),
  PROMPTRUN_MAX_WEBHOOKS: positiveInt.max(1_000_000).prefault(byDefault.PROMPTRUN_MAX_WEBHOOKS),
  PROMPTRUN_MAX_PROMPT_VERSIONS: positiveInt
    .max(100_000_000)
    .prefault(byDefault.PROMPTRUN_MAX_PROMPT_VERSIONS),
  PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS: positiveInt.prefault(byDefault.PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS),
  PROMPTRUN_PROVIDER_TIMEOUT_MS: positiveInt.prefault(byDefault.PROMPTRUN_PROVIDER_TIMEOUT_MS),
  PROMPTRUN_MAX_OUTPUT_BYTES: positiveInt.prefault(byDefault.PROMPTRUN_MAX_OUTPUT_BYTES),
  PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES: positiveInt.prefault(
    byDefault.PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES,
  ),
  PROMPTRUN_PROVIDER_MAX_LINE_BYTES: positiveInt.prefault(byDefault.PROMPTRUN_PROVIDER_MAX_LINE_BYTES),
  PROMPTRUN_HTTP_IDLE_TIMEOUT: positiveInt.max(255).prefault(byDefault.PROMPTRUN_HTTP_IDLE_TIMEOUT),
  PROMPTRUN_MAX_STREAMS_PER_THREAD: positiveInt
    .max(100_000)
    .prefault(byDefault.PROMPTRUN_MAX_STREAMS_PER_THREAD),
  PROMPTRUN_SEED_DEMO: booleanString.prefault(byDefault.PROMPTRUN_SEED_DEMO),
  PROMPTRUN_DEV_MODEL: booleanString.prefault(byDefault.PROMPTRUN_DEV_MODEL),
  PROMPTRUN_CONSOLE: booleanString.prefault(byDefault.PROMPTRUN_CONSOLE),
  PROMPTRUN_RUN_LEASE_MS: positiveInt.min(500).max(600_000).prefault(byDefault.PROMPTRUN_RUN_LEASE_MS),
  PROMPTRUN_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,99}$/, "must be letters, digits and : . _ - (at most 100)")
    .prefault(byDefault.PROMPTRUN_REDIS_PREFIX),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .prefault(byDefault.LOG_LEVEL),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: absoluteUrl.optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: absoluteUrl.optional(),
});

/** Every variable the server reads. */
export type EnvironmentVariable = keyof typeof environmentSchema.shape;

export interface ServerConfig {
  port: number;
  host: string;
  databaseUrl: string;
  /** Base of URLs the server hands out (PROMPTRUN_PUBLIC_URL, else http://HOST:PORT). */
  publicUrl: string;
  redisUrl: string | undefined;
  /** Prefix of every Redis key and channel (several deployments may share one Redis). */
  redisKeyPrefix: string;
  /**
   * With Postgres (several instances): how long a run stays leased to an instance without renewal;
   * a dead instance's runs are taken over after it.
   */
  runLeaseMs: number;
  /** Undefined when not configured: main generates and stores one for SQLite (dev). */
  secret: string | undefined;
  seedDemo: boolean;
  /** False when PROMPTRUN_PUBLIC_URL was not set: the URL follows the bound port (PORT=0). */
  publicUrlConfigured: boolean;
  streamUrlConfigured: boolean;
  logLevel: z.infer<typeof environmentSchema>["LOG_LEVEL"];
  /** Seconds a socket may stay silent (headers or body included) before Bun closes it. */
  httpIdleTimeoutSeconds: number;
  /** SSE streams open at once on one (tenant, thread); more get 429. */
  maxStreamsPerThread: number;
  /** The web console (PROMPTRUN_CONSOLE, docs/console.md); null when turned off. */
  console: ConsoleConfig | null;
  /** Everything of PromptrunConfig but the secret, which main resolves. */
  engine: Omit<PromptrunConfig, "secret">;
  api: Omit<ApiConfig, "publicUrl">;
}

export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

/** The process's own environment, parsed: the one place that reads `process.env` (the linter enforces it). */
export function readProcessEnvironment(): ServerConfig {
  return parseEnvironment(process.env);
}

/** Parses the environment; throws ConfigurationError with one line naming the variable. */
// long-function: one flat mapping from every variable to the config tree; split, the table would be read in pieces.
export function parseEnvironment(environment: Record<string, string | undefined>): ServerConfig {
  // Empty strings count as unset (docker-compose style `VAR=`).
  const present = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== undefined && value !== ""),
  );
  const result = environmentSchema.safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigurationError(
      `invalid configuration: ${String(issue.path[0] ?? "environment")} ${issue.message}`,
    );
  }
  const env = result.data;
  const publicUrlFallback = `http://${env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST}:${env.PORT}`;
  const publicUrl = env.PROMPTRUN_PUBLIC_URL ?? publicUrlFallback;
  return {
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    publicUrl,
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.PROMPTRUN_REDIS_PREFIX,
    runLeaseMs: env.PROMPTRUN_RUN_LEASE_MS,
    secret: env.PROMPTRUN_SECRET,
    seedDemo: env.PROMPTRUN_SEED_DEMO,
    publicUrlConfigured: env.PROMPTRUN_PUBLIC_URL !== undefined,
    streamUrlConfigured: env.PROMPTRUN_STREAM_URL !== undefined,
    logLevel: env.LOG_LEVEL,
    httpIdleTimeoutSeconds: env.PROMPTRUN_HTTP_IDLE_TIMEOUT,
    maxStreamsPerThread: env.PROMPTRUN_MAX_STREAMS_PER_THREAD,
    console: env.PROMPTRUN_CONSOLE ? { distDir: CONSOLE_DIST_DIR } : null,
    engine: {
      ...engineDefaults,
      previousSecrets: env.PROMPTRUN_PREVIOUS_SECRETS?.split(",").filter(Boolean) ?? [],
      streamUrl: env.PROMPTRUN_STREAM_URL ?? publicUrl,
      streamTokenTtlSeconds: env.PROMPTRUN_STREAM_TOKEN_TTL,
      concurrency: env.PROMPTRUN_CONCURRENCY,
      tenantConcurrency: env.PROMPTRUN_TENANT_CONCURRENCY,
      queueMemoryRuns: env.PROMPTRUN_QUEUE_MEMORY_RUNS,
      webhookRetrySchedule: env.PROMPTRUN_WEBHOOK_RETRY_SCHEDULE,
      webhookTimeoutMs: env.PROMPTRUN_WEBHOOK_TIMEOUT_MS,
      webhookConcurrency: env.PROMPTRUN_WEBHOOK_CONCURRENCY,
      webhookTenantConcurrency: env.PROMPTRUN_WEBHOOK_TENANT_CONCURRENCY,
      maxWebhooksPerEnvironment: env.PROMPTRUN_MAX_WEBHOOKS_PER_ENVIRONMENT,
      rateLimit: env.PROMPTRUN_RATE_LIMIT,
      maxPendingRunsPerTenant: env.PROMPTRUN_MAX_PENDING_RUNS,
      quotas: {
        apiKeys: env.PROMPTRUN_MAX_API_KEYS,
        environments: env.PROMPTRUN_MAX_ENVIRONMENTS,
        webhooks: env.PROMPTRUN_MAX_WEBHOOKS,
        promptVersions: env.PROMPTRUN_MAX_PROMPT_VERSIONS,
      },
      allowPrivateUrls: env.PROMPTRUN_ALLOW_PRIVATE_URLS,
      devModel: env.PROMPTRUN_DEV_MODEL,
      providers: {
        openai: { apiKey: env.OPENAI_API_KEY, baseUrl: env.OPENAI_BASE_URL },
        anthropic: { apiKey: env.ANTHROPIC_API_KEY, baseUrl: env.ANTHROPIC_BASE_URL },
        compatible: env.PROMPTRUN_PROVIDERS ?? engineDefaults.providers.compatible,
      },
      priceOverrides: env.PROMPTRUN_PRICES ?? engineDefaults.priceOverrides,
      replayBufferSeconds: env.PROMPTRUN_REPLAY_BUFFER_SECONDS,
      knowledge: {
        ...engineDefaults.knowledge,
        maxUploadBytes: env.PROMPTRUN_MAX_UPLOAD_BYTES,
        defaultEmbeddingModel: env.PROMPTRUN_EMBEDDING_MODEL,
        ingestConcurrency: env.PROMPTRUN_INGEST_CONCURRENCY,
      },
      tools: {
        ...engineDefaults.tools,
        timeoutMs: env.PROMPTRUN_TOOL_TIMEOUT_MS,
        maxResponseBytes: env.PROMPTRUN_TOOL_MAX_RESPONSE_BYTES,
      },
      run: {
        ...engineDefaults.run,
        maxAttempts: env.PROMPTRUN_MAX_ATTEMPTS,
        backoffBaseMs: env.PROMPTRUN_RETRY_BASE_MS,
        idleTimeoutMs: env.PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS,
        attemptTimeoutMs: env.PROMPTRUN_PROVIDER_TIMEOUT_MS,
        maxOutputBytes: env.PROMPTRUN_MAX_OUTPUT_BYTES,
        maxResponseBytes: env.PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES,
        maxResponseLineBytes: env.PROMPTRUN_PROVIDER_MAX_LINE_BYTES,
      },
    },
    api: {
      maxBodyBytes: env.PROMPTRUN_MAX_BODY_BYTES,
      maxUploadBytes: env.PROMPTRUN_MAX_UPLOAD_BYTES,
      maxJsonDepth: defaultApiConfig.maxJsonDepth,
      subscriberBufferBytes: defaultApiConfig.subscriberBufferBytes,
      pingIntervalMs: env.PROMPTRUN_PING_INTERVAL_MS,
      ...(env.PROMPTRUN_ADMIN_TOKEN ? { adminToken: env.PROMPTRUN_ADMIN_TOKEN } : {}),
      ...(env.PROMPTRUN_METRICS_TOKEN ? { metricsToken: env.PROMPTRUN_METRICS_TOKEN } : {}),
    },
  };
}
