import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { defaultApiConfig } from "@promptrun/api";
import { defaultConfig } from "@promptrun/core";
import { CONSOLE_DIST_DIR, parseEnvironment } from "./env.ts";

describe("parseEnvironment", () => {
  test("defaults match the README's configuration table", () => {
    const config = parseEnvironment({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe("127.0.0.1");
    expect(config.databaseUrl).toBe("file:./data/promptrun.db");
    expect(config.publicUrl).toBe("http://127.0.0.1:3000");
    expect(config.engine.streamUrl).toBe("http://127.0.0.1:3000");
    expect(config.engine.streamTokenTtlSeconds).toBe(300);
    expect(config.engine.concurrency).toBe(32);
    expect(config.engine.tenantConcurrency).toBe(8);
    expect(config.engine.webhookRetrySchedule).toEqual([5, 300, 1800, 7200, 18000, 36000]);
    expect(config.engine.rateLimit).toEqual({ perSecond: 100, burst: 200 });
    expect(config.engine.allowPrivateUrls).toBe(false);
    expect(config.redisUrl).toBeUndefined();
    expect(config.redisKeyPrefix).toBe("promptrun");
    expect(config.runLeaseMs).toBe(10_000);
    expect(config.engine.quotas).toEqual({
      apiKeys: 50,
      environments: 20,
      webhooks: 100,
      promptVersions: 10_000,
    });
  });

  test("an empty environment gives core's and the API's own defaults (one source)", () => {
    const config = parseEnvironment({});
    const { secret: _secret, ...engineDefaults } = defaultConfig({ secret: "unused" });
    expect(config.engine).toEqual(engineDefaults);
    expect({ ...config.api, publicUrl: config.publicUrl }).toEqual(defaultApiConfig);
  });

  test("per-tenant quotas are configurable and must be positive", () => {
    const config = parseEnvironment({
      PROMPTRUN_MAX_API_KEYS: "3",
      PROMPTRUN_MAX_ENVIRONMENTS: "4",
      PROMPTRUN_MAX_WEBHOOKS: "5",
      PROMPTRUN_MAX_PROMPT_VERSIONS: "6",
    });
    expect(config.engine.quotas).toEqual({ apiKeys: 3, environments: 4, webhooks: 5, promptVersions: 6 });
    expect(() => parseEnvironment({ PROMPTRUN_MAX_WEBHOOKS: "0" })).toThrow(/PROMPTRUN_MAX_WEBHOOKS/);
  });

  test("the request body limit is configurable (PROMPTRUN_MAX_BODY_BYTES), 1 KiB to 1 GiB", () => {
    expect(parseEnvironment({}).api.maxBodyBytes).toBe(1_048_576);
    expect(parseEnvironment({ PROMPTRUN_MAX_BODY_BYTES: "8388608" }).api.maxBodyBytes).toBe(8_388_608);
    for (const bad of ["0", "1023", "2000000000", "1.5", "1MiB"])
      expect(() => parseEnvironment({ PROMPTRUN_MAX_BODY_BYTES: bad })).toThrow(
        "invalid configuration: PROMPTRUN_MAX_BODY_BYTES",
      );
  });

  test("knowledge bases: upload limit (engine and transport), embedding model, ingest concurrency", () => {
    const defaults = parseEnvironment({});
    expect(defaults.engine.knowledge).toMatchObject({
      maxUploadBytes: 20 * 1024 * 1024,
      defaultEmbeddingModel: "dev:hash",
      ingestConcurrency: 2,
    });
    expect(defaults.api.maxUploadBytes).toBe(20 * 1024 * 1024);
    const set = parseEnvironment({
      PROMPTRUN_MAX_UPLOAD_BYTES: "1048576",
      PROMPTRUN_EMBEDDING_MODEL: "openai:text-embedding-3-small",
      PROMPTRUN_INGEST_CONCURRENCY: "4",
    });
    expect(set.engine.knowledge).toMatchObject({
      maxUploadBytes: 1_048_576,
      defaultEmbeddingModel: "openai:text-embedding-3-small",
      ingestConcurrency: 4,
    });
    expect(set.api.maxUploadBytes).toBe(1_048_576);
    expect(() => parseEnvironment({ PROMPTRUN_EMBEDDING_MODEL: "hash" })).toThrow(
      "PROMPTRUN_EMBEDDING_MODEL",
    );
    expect(() => parseEnvironment({ PROMPTRUN_INGEST_CONCURRENCY: "0" })).toThrow(
      "PROMPTRUN_INGEST_CONCURRENCY",
    );
    expect(() => parseEnvironment({ PROMPTRUN_MAX_UPLOAD_BYTES: "10" })).toThrow(
      "PROMPTRUN_MAX_UPLOAD_BYTES",
    );
  });

  test("scale-out settings: Postgres and Redis URLs, lease length, key prefix", () => {
    const config = parseEnvironment({
      DATABASE_URL: "postgres://promptrun:secret@db:5432/promptrun",
      REDIS_URL: "redis://cache:6379/0",
      PROMPTRUN_RUN_LEASE_MS: "3000",
      PROMPTRUN_REDIS_PREFIX: "staging:promptrun",
    });
    expect(config.databaseUrl).toBe("postgres://promptrun:secret@db:5432/promptrun");
    expect(config.redisUrl).toBe("redis://cache:6379/0");
    expect(config.runLeaseMs).toBe(3000);
    expect(config.redisKeyPrefix).toBe("staging:promptrun");
    expect(() => parseEnvironment({ REDIS_URL: "cache:6379" })).toThrow(
      "invalid configuration: REDIS_URL must be redis://…",
    );
    expect(() => parseEnvironment({ PROMPTRUN_RUN_LEASE_MS: "100" })).toThrow("PROMPTRUN_RUN_LEASE_MS");
    expect(() => parseEnvironment({ PROMPTRUN_REDIS_PREFIX: "bad prefix" })).toThrow(
      "PROMPTRUN_REDIS_PREFIX",
    );
  });

  test("parses rates, schedules, providers, prices and URLs", () => {
    const config = parseEnvironment({
      PORT: "8080",
      PROMPTRUN_PUBLIC_URL: "https://api.example.com/",
      PROMPTRUN_RATE_LIMIT: "600/m,20",
      PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "0.1,0.5",
      PROMPTRUN_PROVIDERS: "ollama=http://127.0.0.1:11434/v1,router=https://openrouter.ai/api/v1|sk-or",
      PROMPTRUN_PRICES: '{"ollama:llama3.2":{"inputPerMillion":0,"outputPerMillion":0}}',
      PROMPTRUN_ALLOW_PRIVATE_URLS: "true",
      OPENAI_API_KEY: "",
    });
    expect(config.publicUrl).toBe("https://api.example.com");
    expect(config.engine.streamUrl).toBe("https://api.example.com");
    expect(config.engine.rateLimit).toEqual({ perSecond: 10, burst: 20 });
    expect(config.engine.webhookRetrySchedule).toEqual([0.1, 0.5]);
    expect(config.engine.providers.compatible).toEqual([
      { name: "ollama", baseUrl: "http://127.0.0.1:11434/v1" },
      { name: "router", baseUrl: "https://openrouter.ai/api/v1", apiKey: "sk-or" },
    ]);
    expect(config.engine.priceOverrides["ollama:llama3.2"]).toEqual({
      inputPerMillion: 0,
      outputPerMillion: 0,
    });
    expect(config.engine.allowPrivateUrls).toBe(true);
    expect(config.engine.providers.openai.apiKey).toBeUndefined();
  });

  test("hardening limits: pending-run cap, provider timeouts, HTTP idle timeout, streams per thread", () => {
    const defaults = parseEnvironment({});
    expect(defaults.engine.maxPendingRunsPerTenant).toBe(100_000);
    expect(defaults.engine.run.idleTimeoutMs).toBe(120_000);
    expect(defaults.engine.run.attemptTimeoutMs).toBe(600_000);
    expect(defaults.httpIdleTimeoutSeconds).toBe(30);
    expect(defaults.maxStreamsPerThread).toBe(50);
    const config = parseEnvironment({
      PROMPTRUN_MAX_PENDING_RUNS: "7",
      PROMPTRUN_PROVIDER_IDLE_TIMEOUT_MS: "1500",
      PROMPTRUN_PROVIDER_TIMEOUT_MS: "9000",
      PROMPTRUN_HTTP_IDLE_TIMEOUT: "2",
      PROMPTRUN_MAX_STREAMS_PER_THREAD: "3",
    });
    expect(config.engine.maxPendingRunsPerTenant).toBe(7);
    expect(config.engine.run).toMatchObject({ idleTimeoutMs: 1500, attemptTimeoutMs: 9000, maxAttempts: 4 });
    expect(config.httpIdleTimeoutSeconds).toBe(2);
    expect(config.maxStreamsPerThread).toBe(3);
    expect(() => parseEnvironment({ PROMPTRUN_MAX_PENDING_RUNS: "0" })).toThrow(
      "invalid configuration: PROMPTRUN_MAX_PENDING_RUNS",
    );
    // Bun.serve takes at most 255 s.
    expect(() => parseEnvironment({ PROMPTRUN_HTTP_IDLE_TIMEOUT: "300" })).toThrow(
      "invalid configuration: PROMPTRUN_HTTP_IDLE_TIMEOUT",
    );
  });

  test("provider response and output caps: defaults and overrides", () => {
    expect(parseEnvironment({}).engine.run).toMatchObject({
      maxOutputBytes: 4_194_304,
      maxResponseBytes: 67_108_864,
      maxResponseLineBytes: 1_048_576,
    });
    const config = parseEnvironment({
      PROMPTRUN_MAX_OUTPUT_BYTES: "1000",
      PROMPTRUN_PROVIDER_MAX_RESPONSE_BYTES: "2000",
      PROMPTRUN_PROVIDER_MAX_LINE_BYTES: "300",
    });
    expect(config.engine.run).toMatchObject({
      maxOutputBytes: 1000,
      maxResponseBytes: 2000,
      maxResponseLineBytes: 300,
    });
  });

  test("PROMPTRUN_DEV_MODEL: on by default, false turns the development model off", () => {
    expect(parseEnvironment({}).engine.devModel).toBe(true);
    expect(parseEnvironment({ PROMPTRUN_DEV_MODEL: "false" }).engine.devModel).toBe(false);
    expect(() => parseEnvironment({ PROMPTRUN_DEV_MODEL: "maybe" })).toThrow("PROMPTRUN_DEV_MODEL");
  });

  test("PROMPTRUN_CONSOLE: on by default, served from apps/console/dist of the repository; false turns it off", () => {
    expect(parseEnvironment({}).console).toEqual({ distDir: CONSOLE_DIST_DIR });
    // Found from the source file, not the working directory: the repository root holds apps/server.
    expect(CONSOLE_DIST_DIR).toEndWith(join("apps", "console", "dist"));
    expect(existsSync(join(CONSOLE_DIST_DIR, "..", "..", "server", "src", "env.ts"))).toBe(true);
    for (const off of ["false", "0", "no"])
      expect(parseEnvironment({ PROMPTRUN_CONSOLE: off }).console).toBeNull();
    expect(parseEnvironment({ PROMPTRUN_CONSOLE: "true" }).console).toEqual({ distDir: CONSOLE_DIST_DIR });
    expect(() => parseEnvironment({ PROMPTRUN_CONSOLE: "off" })).toThrow(
      "invalid configuration: PROMPTRUN_CONSOLE",
    );
  });

  test("PROMPTRUN_METRICS_TOKEN: unset leaves /metrics open; set, it reaches the API config; short is refused", () => {
    expect(parseEnvironment({}).api.metricsToken).toBeUndefined();
    const token = "scrape-token-0123456789";
    expect(parseEnvironment({ PROMPTRUN_METRICS_TOKEN: token }).api.metricsToken).toBe(token);
    expect(() => parseEnvironment({ PROMPTRUN_METRICS_TOKEN: "short" })).toThrow("PROMPTRUN_METRICS_TOKEN");
  });

  test("an invalid value names the variable in one line", () => {
    const message = (env: Record<string, string>) => {
      try {
        parseEnvironment(env);
        return "accepted";
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(message({ PORT: "http" })).toStartWith("invalid configuration: PORT");
    expect(message({ PROMPTRUN_RATE_LIMIT: "lots" })).toStartWith(
      "invalid configuration: PROMPTRUN_RATE_LIMIT",
    );
    expect(message({ PROMPTRUN_SECRET: "short" })).toStartWith("invalid configuration: PROMPTRUN_SECRET");
    expect(message({ DATABASE_URL: "mysql://x" })).toStartWith("invalid configuration: DATABASE_URL");
    expect(message({ PROMPTRUN_PROVIDERS: "openai=http://x" })).toStartWith(
      "invalid configuration: PROMPTRUN_PROVIDERS",
    );
    expect(message({ PROMPTRUN_ALLOW_PRIVATE_URLS: "maybe" })).toStartWith(
      "invalid configuration: PROMPTRUN_ALLOW_PRIVATE_URLS",
    );
    expect(message({ PROMPTRUN_PRICES: "{" })).toStartWith("invalid configuration: PROMPTRUN_PRICES");
    for (const text of ["PORT", "RATE"]) expect(message({ PORT: text })).not.toContain("\n");
  });
});
