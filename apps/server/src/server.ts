/**
 * Composition root: configuration → store → engine → HTTP. No behaviour of its own.
 */

import { hostname } from "node:os";
import { resolve } from "node:path";
import { type ApiMetrics, createApp, createMetricsRegistry, type Logger } from "@promptrun/api";
import { createPromptrun, type Promptrun, type Store } from "@promptrun/core";
import {
  acquireServerLock,
  connectRedisCoordination,
  openStore,
  type RedisCoordination,
  redactDatabaseUrl,
  type ServerLock,
  storeKindOf,
} from "@promptrun/db";
import type { ServerConfig } from "./env.ts";
import { readPromptFiles } from "./prompt-files.ts";
import { resolveSecret } from "./secret.ts";
import { seedDemoKnowledge } from "./seed-demo-knowledge.ts";
import { seedDemoWorkflows } from "./seed-demo-workflows.ts";

export const EXAMPLE_PROMPTS_DIR = resolve(import.meta.dir, "../../../prompts");

export interface Runtime {
  store: Store;
  promptrun: Promptrun;
  secretSource: string;
  /** Several instances may share the database: runs and webhook deliveries are leased. */
  cluster: { owner: string; redis: boolean } | null;
  /** Closes Redis (when connected) and the store; after promptrun.stop(). */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  metrics?: ApiMetrics;
  /** Serving: connect Redis (REDIS_URL) for cross-instance streams, rate limits and signals. */
  serving?: boolean;
  logger?: Logger;
}

/** This process's name in run and delivery leases: readable in the database, unique per start. */
const instanceOwner = () => `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;

/**
 * Opens the database (applying migrations) and builds the engine, without starting it. A
 * Postgres DATABASE_URL means several instances may share it: the engine leases runs (see
 * docs/DEPLOYMENT.md); with REDIS_URL, thread streams, rate limits and wake-ups are shared too.
 */
export async function openRuntime(config: ServerConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  const { secret, source } = resolveSecret(config.secret, config.databaseUrl);
  const shared = storeKindOf(config.databaseUrl) === "postgres";
  // The single-instance engine runs every pending run without leases: one server per SQLite
  // file (docs/DEPLOYMENT.md). CLI commands open the file without this lock.
  const serverLock = options.serving && !shared ? lockSqliteForServing(config.databaseUrl) : null;
  const store = await openStore(config.databaseUrl).catch((error: unknown) => {
    serverLock?.release();
    if (!shared) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`DATABASE_URL: cannot open ${redactDatabaseUrl(config.databaseUrl)}: ${reason}`);
  });
  const warn = (message: string, error: unknown) =>
    options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, message);
  let redis: RedisCoordination | null = null;
  try {
    if (options.serving && config.redisUrl) {
      redis = await connectRedisCoordination({
        url: config.redisUrl,
        keyPrefix: config.redisKeyPrefix,
        clock: { now: () => new Date() },
        replayBufferSeconds: config.engine.replayBufferSeconds,
        rateLimit: config.engine.rateLimit,
        onError: warn,
      });
    }
  } catch (error) {
    await store.close();
    serverLock?.release();
    throw new Error(`REDIS_URL: ${error instanceof Error ? error.message : String(error)}`);
  }
  const cluster = shared
    ? {
        owner: instanceOwner(),
        leaseMs: config.runLeaseMs,
        ...(redis ? { signals: redis.signals } : {}),
      }
    : undefined;
  const promptrun = createPromptrun({
    store,
    config: { ...config.engine, secret },
    ...(options.metrics ? { metrics: options.metrics.engine } : {}),
    ...(redis
      ? { events: redis.events, rateLimits: redis.rateLimits, signInFailures: redis.signInFailures }
      : {}),
    ...(cluster ? { cluster } : {}),
    ...(options.logger ? { logError: warn } : {}),
  });
  let closing: Promise<void> | null = null;
  return {
    store,
    promptrun,
    secretSource: source,
    cluster: cluster ? { owner: cluster.owner, redis: redis !== null } : null,
    close() {
      closing ??= (async () => {
        await redis?.close();
        await store.close();
        serverLock?.release();
      })();
      return closing;
    },
  };
}

/** Takes the one-server-per-file lock, or refuses with the line an operator needs. */
const lockSqliteForServing = (databaseUrl: string): ServerLock => {
  try {
    return acquireServerLock(databaseUrl);
  } catch (error) {
    throw new Error(`DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`);
  }
};

export interface DemoSeed {
  tenantId: string;
  apiKey: string;
  prompts: Array<{ slug: string; version: number }>;
  /** The demo workflows (with the development model only: their steps run on dev:echo). */
  workflows: Array<{ slug: string; version: number }>;
}

/** Example prompts on `dev:*` are left out when the development model is turned off. */
const seedablePrompts = (files: unknown[], devModel: boolean): unknown[] =>
  devModel
    ? files
    : files.filter(
        (file) =>
          !(
            typeof file === "object" &&
            file !== null &&
            "model" in file &&
            String(file.model).startsWith("dev:")
          ),
      );

/**
 * On an empty database: a demo tenant, its API key (returned once), the demo knowledge base
 * (with the development model), the example prompts, then the demo workflows (with the
 * development model; their steps name those prompts and that knowledge base).
 */
export async function seedDemoIfEmpty(
  runtime: Runtime,
  options: { devModel: boolean; promptsDir?: string },
): Promise<DemoSeed | null> {
  const { services } = runtime.promptrun;
  if ((await services.tenants.list()).length > 0) return null;
  const files = seedablePrompts(readPromptFiles(options.promptsDir ?? EXAMPLE_PROMPTS_DIR), options.devModel);
  const { tenant, apiKey } = await services.tenants.create("demo");
  // The demo knowledge base before the prompts: ask-docs retrieves from it (keyless, like dev:echo).
  if (options.devModel) await seedDemoKnowledge(services.knowledge, tenant.id);
  const pushed = files.length > 0 ? await services.prompts.push(tenant.id, files) : [];
  const workflows = options.devModel ? await seedDemoWorkflows(services.workflows, tenant.id) : [];
  return {
    tenantId: tenant.id,
    apiKey,
    prompts: pushed.map(({ slug, version }) => ({ slug, version })),
    workflows,
  };
}

export interface RunningServer {
  url: string;
  port: number;
  demo: DemoSeed | null;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/** With PORT=0 the URLs the server hands out must name the port it actually bound. */
function withBoundUrls(config: ServerConfig, port: number): ServerConfig {
  const bound = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  const publicUrl = config.publicUrlConfigured ? config.publicUrl : bound;
  const streamUrl = config.streamUrlConfigured ? config.engine.streamUrl : publicUrl;
  return { ...config, publicUrl, engine: { ...config.engine, streamUrl } };
}

const unavailable = () =>
  new Response(JSON.stringify({ error: "starting up" }), {
    status: 503,
    headers: { "content-type": "application/json", "retry-after": "1" },
  });

const BUN_DEFAULT_MAX_BODY_BYTES = 128 * 1024 * 1024;

type Handler = (request: Request, server: Bun.Server<undefined>) => Response | Promise<Response>;

/** Binds the HTTP server; `handle` answers every request (503 until the runtime is ready). */
function listen(config: ServerConfig, logger: Logger, handle: Handler): Bun.Server<undefined> {
  try {
    return Bun.serve({
      hostname: config.host,
      port: config.port,
      // Long enough for slow clients, short enough to shed idle sockets (a half-sent request
      // included); SSE opts out per request.
      idleTimeout: config.httpIdleTimeoutSeconds,
      // Bun's own cap (128 MiB by default) stays a backstop but never undercuts ours: the routes
      // refuse bodies over their limits themselves, by Content-Length, before reading them
      // (docs/KNOWLEDGE.md, uploads). Bun's cap answers without that care, so it stays above them.
      maxRequestBodySize: Math.max(
        BUN_DEFAULT_MAX_BODY_BYTES,
        Math.max(config.api.maxBodyBytes, config.api.maxUploadBytes ?? 0) + 1024 * 1024,
      ),
      fetch: handle,
      error: (error) => {
        logger.error({ err: { message: error.message, stack: error.stack } }, "unhandled server error");
        return new Response(JSON.stringify({ error: "internal server error" }), {
          status: 500,
          headers: { "content-type": "application/json" },
        });
      },
    });
  } catch (error) {
    throw new Error(
      `cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export async function startServer(initialConfig: ServerConfig, logger: Logger): Promise<RunningServer> {
  // Bind first (so PORT=0 resolves and a taken port fails fast), answer 503 until ready.
  let handle: Handler = unavailable;
  const server = listen(initialConfig, logger, (request, bunServer) => handle(request, bunServer));
  const config = withBoundUrls(initialConfig, server.port ?? initialConfig.port);
  const metrics = createMetricsRegistry({ processMetrics: true });
  let runtime: Runtime;
  try {
    runtime = await openRuntime(config, { metrics, serving: true, logger });
  } catch (error) {
    server.stop(true);
    throw error;
  }
  const demo = config.seedDemo ? await seedDemoIfEmpty(runtime, { devModel: config.engine.devModel }) : null;
  const { promptrun } = runtime;
  const app = createApp(
    {
      services: promptrun.services,
      config: {
        ...config.api,
        publicUrl: config.publicUrl,
        ...(config.console ? { console: config.console } : {}),
      },
      logger,
      metrics,
      health: async () => ({ ok: true, details: { engine: promptrun.engine.stats() } }),
    },
    { maxStreamsPerThread: config.maxStreamsPerThread },
  );
  await promptrun.start();
  handle = (request, bunServer) => app.fetch(request, bunServer);
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  logger.info(
    {
      url,
      database: redactDatabaseUrl(config.databaseUrl),
      secretFrom: runtime.secretSource,
      ...(runtime.cluster ? { cluster: runtime.cluster } : {}),
    },
    "promptrun listening",
  );

  let stopping: Promise<void> | null = null;
  return {
    url,
    port: server.port ?? config.port,
    demo,
    stop: (options) => {
      stopping ??= (async () => {
        server.stop(false);
        const closed = app.closeAllStreams("shutdown");
        logger.info({ streams: closed }, "closed open streams");
        await promptrun.stop({ graceMs: options?.graceMs ?? 10_000 });
        server.stop(true);
        await runtime.close();
      })();
      return stopping;
    },
  };
}
