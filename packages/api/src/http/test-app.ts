/**
 * Test support: a real app over real services (createPromptrun on the in-memory store) with
 * two active tenants, one inactive tenant, and prompts pushed for tenant A.
 */
import { createPromptrun, type PromptrunConfig, type Store } from "@promptrun/core";
import {
  createMemoryStore,
  createTestConfig,
  type ManualClock,
  manualClock,
  recordingEngine,
} from "@promptrun/core/testing";
import { type App, type AppOptions, createApp } from "../app.ts";
import { type ApiConfig, type ApiDeps, defaultApiConfig, type Logger } from "../deps.ts";

export interface LogEntry {
  level: "info" | "warn" | "error" | "debug";
  object: Record<string, unknown>;
  message: string | undefined;
}

export interface TestApp {
  app: App;
  /** The memory store under the services (to put runs in states no request reaches, e.g. paused). */
  store: Store;
  /** The services' clock: the system's, or a manual one with `recordRuns`. */
  clock: { now(): Date } & Partial<Pick<ManualClock, "advance">>;
  deps: ApiDeps;
  services: ApiDeps["services"];
  logs: LogEntry[];
  keys: { a: string; b: string; inactive: string };
  tenants: { a: string; b: string; inactive: string };
  /** `app.fetch` on `http://localhost{path}`; `key` sets `Authorization: Bearer <key>`. */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  dispose(): Promise<void>;
}

export interface TestAppOptions {
  engine?: Partial<PromptrunConfig>;
  api?: Partial<ApiConfig>;
  deps?: Partial<Omit<ApiDeps, "services" | "config" | "logger">>;
  app?: AppOptions;
  /**
   * Runs are recorded, never executed (a RunEngine that only records, cancel included), on a
   * manual clock: for routes about a run's state, which a test then sets through `store`.
   */
  recordRuns?: boolean;
  /** Replaces services before the app is built (to inject failures). */
  wrapServices?: (services: ApiDeps["services"]) => ApiDeps["services"];
}

export const greetPrompt = {
  slug: "greet",
  model: "dev:echo",
  inputs: { name: { type: "string" }, count: { type: "integer", optional: true } },
  messages: [{ role: "user", content: "Hello {{name}}" }],
  tags: ["production"],
};

/** Streams slowly, so a run stays pending long enough to be cancelled. */
export const slowPrompt = {
  slug: "slow",
  model: "dev:echo",
  params: { delayMs: 60_000 },
  inputs: {},
  messages: [{ role: "user", content: "one two three" }],
};

function capturingLogger(logs: LogEntry[]): Logger {
  const at =
    (level: LogEntry["level"]) =>
    (object: Record<string, unknown>, message?: string): void => {
      logs.push({ level, object, message });
    };
  return { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") };
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const store = createMemoryStore();
  const clock = options.recordRuns ? manualClock(new Date()) : { now: () => new Date() };
  const promptrun = createPromptrun({
    store,
    config: createTestConfig(options.engine),
    clock,
    ...(options.recordRuns ? { engine: recordingEngine({ store, clock }) } : {}),
  });
  await promptrun.start();
  const base = promptrun.services;
  const a = await base.tenants.create("tenant-a");
  const b = await base.tenants.create("tenant-b");
  const inactive = await base.tenants.create("tenant-inactive", { active: false });
  await base.prompts.push(a.tenant.id, [greetPrompt, slowPrompt]);
  const services = options.wrapServices ? options.wrapServices(base) : base;
  const logs: LogEntry[] = [];
  const deps: ApiDeps = {
    services,
    config: { ...defaultApiConfig, ...options.api },
    logger: capturingLogger(logs),
    ...options.deps,
  };
  const app = createApp(deps, options.app);
  return {
    app,
    store,
    clock,
    deps,
    services,
    logs,
    keys: { a: a.apiKey, b: b.apiKey, inactive: inactive.apiKey },
    tenants: { a: a.tenant.id, b: b.tenant.id, inactive: inactive.tenant.id },
    request(path, init = {}) {
      const { key, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== undefined) headers.set("authorization", `Bearer ${key}`);
      if (json !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
      const body = json === undefined ? rest.body : JSON.stringify(json);
      return app.fetch(new Request(`http://localhost${path}`, { ...rest, headers, body }));
    },
    async dispose() {
      app.closeAllStreams("shutdown");
      await promptrun.stop({ graceMs: 0 });
    },
  };
}
