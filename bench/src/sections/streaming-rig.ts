/** The processes section 2 measures: Promptrun, Portkey, the bare relay and the stream client. */
import { type BareRelay, startBareRelay } from "../bare-relay.ts";
import { startBenchServer } from "../bench-server.ts";
import { spawnChild } from "../child-channel.ts";
import { type PortkeyGateway, startPortkeyGateway } from "../portkey-gateway.ts";
import type { PromptrunServer } from "../promptrun-server.ts";
import type { StreamBatchResult } from "../stream-measurement.ts";
import type { BenchContext } from "./bench-context.ts";
import { type BatchShape, type PathEndpoints, type StreamPath, streamCommand } from "./streaming-paths.ts";

const CLIENT_SCRIPT = `${import.meta.dir}/../processes/stream-client.ts`;
/** Execution slots above the largest capacity level, so every stream of a level runs at once. */
export const PROMPTRUN_CONCURRENCY = 2048;
/** Bun lets a process have 256 fetches open by default: fewer than the capacity levels' streams. */
const OPEN_FETCHES = { BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" };

/** The process (a key of StreamingRig.pids) that does a relay path's work. */
export const PROCESS_OF: Partial<Record<StreamPath, string>> = {
  "bare Bun relay (floor)": "relay",
  "Portkey gateway": "portkey",
  "Promptrun (SSE)": "promptrun",
};

export interface StreamingRig {
  /** Every path that runs here (Portkey only when it started). */
  paths: StreamPath[];
  /** The processes whose CPU the section reports, by short name. */
  pids: Record<string, number>;
  portkey: { version: string } | { error: string };
  /** The Promptrun server, for requests made outside the stream client. */
  promptrun: { url: string; apiKey: string; pid: number };
  run(path: StreamPath, batch: BatchShape): Promise<StreamBatchResult>;
  stop(): Promise<void>;
}

async function tryPortkey(): Promise<PortkeyGateway | { error: string }> {
  try {
    return await startPortkeyGateway(OPEN_FETCHES);
  } catch (error) {
    return { error: error instanceof Error ? error.message.split("\n")[0]! : String(error) };
  }
}

export async function startStreamingRig(context: BenchContext): Promise<StreamingRig> {
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    const server: PromptrunServer = await startBenchServer({
      promptsDir: context.promptsDir,
      upstreamUrl: context.upstream.url,
      env: {
        PROMPTRUN_CONCURRENCY: String(PROMPTRUN_CONCURRENCY),
        PROMPTRUN_TENANT_CONCURRENCY: String(PROMPTRUN_CONCURRENCY),
        ...OPEN_FETCHES,
      },
    });
    stops.push(() => server.dispose(5_000));
    const portkey = await tryPortkey();
    if ("stop" in portkey) stops.push(() => portkey.stop());
    const relay: BareRelay = await startBareRelay(context.upstream.url, OPEN_FETCHES);
    stops.push(() => relay.stop());
    const client = spawnChild(["bun", CLIENT_SCRIPT], { env: OPEN_FETCHES, fileLimit: 16_384 });
    stops.push(async () => {
      client.send({ type: "exit" });
      await client.stop(2_000);
    });
    await client.next("ready", 30_000);
    const running = "url" in portkey ? portkey : null;
    const endpoints: PathEndpoints = {
      upstreamBase: `${context.upstream.url}/v1`,
      relayUrl: relay.url,
      portkey: running,
      promptrun: { url: server.url, apiKey: server.apiKey },
    };
    return {
      paths: [
        "upstream directly",
        "AI SDK streamText (no server)",
        "bare Bun relay (floor)",
        ...(running ? (["Portkey gateway"] as const) : []),
        "Promptrun (SSE)",
      ],
      pids: {
        promptrun: server.pid,
        relay: relay.pid,
        upstream: context.upstream.pid,
        client: client.pid,
        ...(running ? { portkey: running.pid } : {}),
      },
      portkey: running ? { version: running.version } : { error: (portkey as { error: string }).error },
      promptrun: { url: server.url, apiKey: server.apiKey, pid: server.pid },
      async run(path, batch) {
        client.send(streamCommand(endpoints, path, batch));
        return client.next<StreamBatchResult & { type: string }>("result", 300_000);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
