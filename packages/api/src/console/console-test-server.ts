/**
 * Test support: the whole app on a real Bun server on 127.0.0.1 (port 0), over real services on
 * the memory store with a manual clock (session expiry, the failed sign-in window), two active
 * tenants with a prompt each, and the console served from `distDir`.
 */
import { createPromptrun, type PromptrunServices } from "@promptrun/core";
import {
  createMemoryStore,
  createTestConfig,
  type ManualClock,
  manualClock,
  recordingEngine,
} from "@promptrun/core/testing";
import { createApp } from "../app.ts";
import { type ApiConfig, defaultApiConfig, silentLogger } from "../deps.ts";
import { CONSOLE_COOKIE } from "./console-cookie.ts";

export interface ConsoleTestServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  clock: ManualClock;
  services: PromptrunServices;
  keys: { a: string; b: string };
  tenants: { a: string; b: string };
  /** POST /console/session with `{"apiKey": key}`; `cookie` is the `name=value` pair to send back. */
  signIn(
    key: string,
    init?: { headers?: Record<string, string> },
  ): Promise<{ response: Response; cookie: string }>;
  /** fetch on this server; `cookie` is sent as `Cookie`, `console` adds `x-promptrun-console: 1`. */
  request(path: string, init?: RequestInit & { cookie?: string; console?: boolean }): Promise<Response>;
  close(): Promise<void>;
}

export interface ConsoleTestServerOptions {
  /** The console's build; null turns the console off. Default: a directory that does not exist. */
  distDir?: string | null;
  /** Default: the bound `http://127.0.0.1:<port>`. */
  publicUrl?: string;
  api?: Partial<ApiConfig>;
}

const prompt = (slug: string) => ({
  slug,
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [{ role: "user", content: "Hello {{name}}" }],
  tags: ["production"],
});

export async function startConsoleTestServer(
  options: ConsoleTestServerOptions = {},
): Promise<ConsoleTestServer> {
  const clock = manualClock(new Date("2030-01-01T00:00:00.000Z"));
  const store = createMemoryStore({ clock });
  const promptrun = createPromptrun({
    store,
    config: createTestConfig(),
    clock,
    engine: recordingEngine({ store, clock }),
  });
  const { services } = promptrun;
  const a = await services.tenants.create("tenant-a");
  const b = await services.tenants.create("tenant-b");
  await services.prompts.push(a.tenant.id, [prompt("greet-a")]);
  await services.prompts.push(b.tenant.id, [prompt("greet-b")]);

  let handle: (request: Request, server: Bun.Server<undefined>) => Promise<Response> = async () =>
    new Response("starting", { status: 503 });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, bun) => handle(request, bun) });
  const url = `http://127.0.0.1:${server.port}`;
  const distDir = options.distDir === undefined ? "/nonexistent/promptrun-console-dist" : options.distDir;
  const app = createApp({
    services,
    config: {
      ...defaultApiConfig,
      publicUrl: options.publicUrl ?? url,
      ...(distDir === null ? {} : { console: { distDir } }),
      ...options.api,
    },
    logger: silentLogger,
  });
  handle = (request, bun) => app.fetch(request, bun);

  const request: ConsoleTestServer["request"] = (path, init = {}) => {
    const { cookie, console: fromConsole, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (cookie !== undefined) headers.set("cookie", cookie);
    if (fromConsole) headers.set("x-promptrun-console", "1");
    return fetch(`${url}${path}`, { ...rest, headers });
  };

  return {
    url,
    clock,
    services,
    keys: { a: a.apiKey, b: b.apiKey },
    tenants: { a: a.tenant.id, b: b.tenant.id },
    request,
    async signIn(key, init = {}) {
      const response = await request("/console/session", {
        method: "POST",
        headers: { "content-type": "application/json", ...init.headers },
        body: JSON.stringify({ apiKey: key }),
      });
      const setCookie = response.headers.get("set-cookie") ?? "";
      const pair = setCookie.split(";", 1)[0] ?? "";
      return { response, cookie: pair.startsWith(`${CONSOLE_COOKIE}=`) ? pair : "" };
    },
    async close() {
      app.closeAllStreams("shutdown");
      await server.stop(true);
      await promptrun.stop();
    },
  };
}
