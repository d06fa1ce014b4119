import { UPSTREAM_PROVIDER } from "./bench-prompts.ts";
import { type PromptrunServer, startPromptrunServer } from "./promptrun-server.ts";

export interface BenchServerOptions {
  promptsDir: string;
  upstreamUrl: string;
  env?: Record<string, string>;
  bunFlags?: string[];
}

/** A fresh Promptrun server with the stamped upstream configured and the bench prompts pushed. */
export async function startBenchServer(options: BenchServerOptions): Promise<PromptrunServer> {
  const server = await startPromptrunServer({
    env: { PROMPTRUN_PROVIDERS: `${UPSTREAM_PROVIDER}=${options.upstreamUrl}/v1`, ...options.env },
    ...(options.bunFlags ? { bunFlags: options.bunFlags } : {}),
  });
  try {
    await server.pushPrompts(options.promptsDir);
  } catch (error) {
    await server.dispose(2_000);
    throw error;
  }
  return server;
}

export interface EngineStats {
  queued: number;
  executing: number;
}

/** Queue and execution counts from GET /health. */
export async function engineStats(server: Pick<PromptrunServer, "url">): Promise<EngineStats> {
  const health = (await (await fetch(`${server.url}/health`)).json()) as {
    engine?: { queued: Record<string, number>; executing: number };
    details?: { engine?: { queued: Record<string, number>; executing: number } };
  };
  const engine = health.engine ?? health.details?.engine;
  if (!engine) throw new Error(`GET /health has no engine stats: ${JSON.stringify(health)}`);
  return {
    queued: Object.values(engine.queued).reduce((sum, count) => sum + count, 0),
    executing: engine.executing,
  };
}

const authHeaders = (server: Pick<PromptrunServer, "apiKey">) => ({
  authorization: `Bearer ${server.apiKey}`,
  "content-type": "application/json",
});

/** POST a run; returns its id (throws unless 202). */
export async function createRun(
  server: Pick<PromptrunServer, "url" | "apiKey">,
  slug: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const response = await fetch(`${server.url}/api/v1/prompts/${slug}/latest/runs`, {
    method: "POST",
    headers: authHeaders(server),
    body: JSON.stringify({ inputs: { message: "bench" }, ...body }),
  });
  if (response.status !== 202)
    throw new Error(`create run ${slug}: HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** A stream token for a thread: the SSE path (`/stream/<thread>`) and the bearer token. */
export async function mintStreamToken(
  server: Pick<PromptrunServer, "url" | "apiKey">,
  thread: string,
): Promise<{ path: string; token: string }> {
  const response = await fetch(`${server.url}/api/v1/threads/${thread}/stream-token`, {
    method: "POST",
    headers: authHeaders(server),
  });
  if (response.status !== 200)
    throw new Error(`stream token: HTTP ${response.status} ${await response.text()}`);
  const { token, url } = (await response.json()) as { token: string; url: string };
  const parsed = new URL(url);
  return { path: `${parsed.pathname}${parsed.search}`, token };
}

/** Runs `task` over `items` with at most `concurrency` at once, keeping the order of results. */
export async function mapConcurrently<T, R>(
  items: T[],
  concurrency: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** Polls until the condition holds; false after timeoutMs. */
export async function pollUntil(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 50,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await Bun.sleep(intervalMs);
  }
}

/**
 * Holds `count` execution slots with runs of the gate prompt (the upstream keeps them waiting),
 * so every run created afterwards stays queued: create-run is then measured alone, and a queue
 * of known depth can be built.
 */
export async function parkExecutionSlots(
  server: Pick<PromptrunServer, "url" | "apiKey">,
  upstreamUrl: string,
  gateSlug: string,
  count: number,
): Promise<void> {
  await fetch(`${upstreamUrl}/control/close-gate`, { method: "POST" });
  await mapConcurrently([...Array(count).keys()], 16, () => createRun(server, gateSlug));
  const parked = await pollUntil(async () => (await engineStats(server)).executing >= count, 20_000);
  if (!parked) throw new Error(`only ${(await engineStats(server)).executing} of ${count} slots parked`);
}

export const openGate = async (upstreamUrl: string) => {
  await fetch(`${upstreamUrl}/control/open-gate`, { method: "POST" });
};
