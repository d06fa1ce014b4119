import { createPromptrun, type PromptrunConfig, type PromptrunServices, type Store } from "@promptrun/core";
import {
  createMemoryStore,
  createTestConfig,
  type ManualClock,
  manualClock,
  recordingEngine,
} from "@promptrun/core/testing";
import type { ApiConfig, ApiDeps, Logger } from "../../deps.ts";
import { defaultApiConfig } from "../../deps.ts";
import type { ApiMetrics } from "../../metrics/metrics-registry.ts";
import { createTrpcHandler, type TrpcHandler } from "../../trpc/index.ts";
import { createStreamHandler, type StreamHandler } from "../index.ts";
import { type CountingBus, countingBus } from "./counting-bus.ts";

export const ADMIN_TOKEN = "admin-token-for-tests-0123456789";

export interface CountingMetrics extends ApiMetrics {
  readonly opened: number;
  readonly closed: number;
}

function countingMetrics(): CountingMetrics {
  let opened = 0;
  let closed = 0;
  return {
    httpRequest() {},
    streamOpened() {
      opened++;
    },
    streamClosed() {
      closed++;
    },
    engine: { runFinished() {}, providerCall() {}, queueDepth() {} },
    text: async () => "",
    contentType: "text/plain",
    get opened() {
      return opened;
    },
    get closed() {
      return closed;
    },
  };
}

export interface LogEntry {
  level: "info" | "warn" | "error" | "debug";
  object: Record<string, unknown>;
  message: string | undefined;
}

export interface TestTenant {
  id: string;
  apiKey: string;
}

export interface ApiTestKit {
  services: PromptrunServices;
  /** The memory store under the services (to put a run in a state no request reaches, e.g. paused). */
  store: Store;
  bus: CountingBus;
  metrics: CountingMetrics;
  clock: ManualClock;
  deps: ApiDeps;
  logs: LogEntry[];
  trpc: TrpcHandler;
  stream: StreamHandler;
  /** `http://127.0.0.1:<port>` of a real Bun server routing /trpc and /stream/:thread. */
  url: string;
  tenantA: TestTenant;
  tenantB: TestTenant;
  close(): Promise<void>;
}

export interface ApiTestKitOptions {
  api?: Partial<ApiConfig>;
  engine?: Partial<PromptrunConfig>;
  /** Wraps the services (e.g. to make one fail). */
  wrapServices?: (services: PromptrunServices) => PromptrunServices;
}

/** Real services on an in-memory store, both handlers, and a Bun server on 127.0.0.1:0. */
export async function createApiTestKit(options: ApiTestKitOptions = {}): Promise<ApiTestKit> {
  const clock = manualClock(new Date());
  const store = createMemoryStore();
  const promptrun = createPromptrun({
    store,
    config: createTestConfig({ allowPrivateUrls: true, ...options.engine }),
    clock,
    // Records runs instead of executing them; cancel() fails a run like the real engine.
    engine: recordingEngine({ store, clock }),
  });
  const bus = countingBus(promptrun.services.events);
  const base: PromptrunServices = { ...promptrun.services, events: bus };
  const services = options.wrapServices?.(base) ?? base;
  const metrics = countingMetrics();
  const logs: LogEntry[] = [];
  const record =
    (level: LogEntry["level"]) =>
    (object: Record<string, unknown>, message?: string): void => {
      logs.push({ level, object, message });
    };
  const logger: Logger = {
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
    debug: record("debug"),
  };
  const deps: ApiDeps = {
    services,
    config: { ...defaultApiConfig, adminToken: ADMIN_TOKEN, ...options.api },
    logger,
    metrics,
  };
  const trpc = createTrpcHandler(deps);
  const stream = createStreamHandler(deps);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request, bunServer) {
      const path = new URL(request.url).pathname;
      if (path.startsWith("/trpc")) return trpc(request);
      if (path.startsWith("/stream/"))
        return stream(request, decodeURIComponent(path.slice("/stream/".length)), bunServer);
      return new Response("not found", { status: 404 });
    },
  });
  const createTenant = async (name: string): Promise<TestTenant> => {
    const { tenant, apiKey } = await promptrun.services.tenants.create(name);
    return { id: tenant.id, apiKey };
  };
  return {
    services,
    store,
    bus,
    metrics,
    clock,
    deps,
    logs,
    trpc,
    stream,
    url: `http://127.0.0.1:${server.port}`,
    tenantA: await createTenant("tenant-a"),
    tenantB: await createTenant("tenant-b"),
    async close() {
      stream.closeAllStreams("shutdown");
      trpc.closeAllSubscriptions("shutdown");
      await server.stop(true);
      await promptrun.stop();
    },
  };
}
