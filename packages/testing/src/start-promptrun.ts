import { createApp, defaultApiConfig, silentLogger } from "@promptrun/api";
import type { PromptFileInput } from "@promptrun/contract";
import { createPromptrun, type ModelPrice, type Promptrun, type PromptrunConfig } from "@promptrun/core";
import { createTestConfig } from "@promptrun/core/testing";
import { openSqliteStore } from "@promptrun/db";
import { type ScriptedModel, startScriptedModel } from "./scripted-model.ts";

/** A prompt to seed; `model` defaults to the scripted model (`script:any`). */
export type TestPrompt = Omit<PromptFileInput, "model"> & { model?: string };

/** Options of {@link startPromptrun}. */
export interface StartPromptrunOptions {
  /** Prompts pushed for the test tenant. */
  prompts?: TestPrompt[];
  /** Price of the scripted model, so costs are non-zero (default: $1 / M input, $2 / M output tokens). */
  modelPrice?: ModelPrice;
  /**
   * Engine configuration overrides (retries are fast by default), and the SSE heartbeat of the
   * test server (`pingIntervalMs`, 2 s by default).
   */
  config?: Partial<PromptrunConfig> & { pingIntervalMs?: number };
}

/** A running in-process Promptrun; see {@link startPromptrun}. */
export interface TestPromptrun {
  /** `http://127.0.0.1:<port>`: base URL of the REST API and of the streams. */
  url: string;
  /** API key of the seeded tenant. */
  apiKey: string;
  tenantId: string;
  /** The development model, scripted per test. */
  script: ScriptedModel;
  /** The services behind the HTTP API (push more prompts, create tenants…). */
  promptrun: Promptrun;
  /** Stops the server, the engine, the model and closes the database. */
  stop(): Promise<void>;
}

/**
 * Starts a real Promptrun for an app's own tests: in-memory SQLite, the real engine and HTTP
 * API on 127.0.0.1 (port 0), a seeded tenant with an API key and the given prompts, and a
 * scripted OpenAI-compatible model that the real provider code calls over HTTP.
 */
export async function startPromptrun(options: StartPromptrunOptions = {}): Promise<TestPromptrun> {
  const script = startScriptedModel();
  const store = await openSqliteStore({ url: ":memory:" });
  // The server learns its port before the app exists; requests arriving earlier wait for it.
  let handler: ((request: Request, server: Bun.Server<undefined>) => Promise<Response>) | undefined;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request, bunServer) =>
      handler ? handler(request, bunServer) : new Response('{"error":"starting"}', { status: 503 }),
  });
  const url = `http://127.0.0.1:${server.port}`;
  const defaults = createTestConfig();
  const { pingIntervalMs = 2_000, ...engineOverrides } = options.config ?? {};
  const config = createTestConfig({
    streamUrl: url,
    providers: {
      openai: {},
      anthropic: {},
      compatible: [{ name: "script", baseUrl: script.server.baseUrl, apiKey: "scripted" }],
    },
    priceOverrides: {
      [script.modelRef]: options.modelPrice ?? {
        inputPerMillion: 1,
        cachedInputPerMillion: 0.5,
        outputPerMillion: 2,
      },
    },
    run: { ...defaults.run, backoffBaseMs: 10, backoffMaxMs: 100 },
    ...engineOverrides,
  });
  const promptrun = createPromptrun({ store, config });
  const app = createApp({
    services: promptrun.services,
    config: { ...defaultApiConfig, publicUrl: url, pingIntervalMs },
    logger: silentLogger,
  });
  handler = (request, bunServer) => app.fetch(request, bunServer);
  await promptrun.start();

  const { tenant, apiKey } = await promptrun.services.tenants.create("test");
  if (options.prompts?.length) {
    await promptrun.services.prompts.push(
      tenant.id,
      options.prompts.map((prompt) => ({ ...prompt, model: prompt.model ?? script.modelRef })),
    );
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    apiKey,
    tenantId: tenant.id,
    script,
    promptrun,
    stop() {
      stopping ??= (async () => {
        app.closeAllStreams("shutdown");
        await promptrun.stop({ graceMs: 0 });
        await server.stop(true);
        await store.close();
        await script.server.close();
      })();
      return stopping;
    },
  };
}
