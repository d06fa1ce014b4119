import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type ChildChannel, spawnChild } from "./child-channel.ts";

export interface PortkeyGateway {
  /** `http://127.0.0.1:<port>`: OpenAI-style routes under /v1. */
  url: string;
  pid: number;
  version: string;
  /** Headers that make it forward to an OpenAI-compatible base URL. */
  headersFor(upstreamBaseUrl: string): Record<string, string>;
  stop(): Promise<void>;
}

const freePort = (): number => {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
};

/**
 * The Portkey AI gateway (`@portkey-ai/gateway` from npm) as a local process under Bun (its
 * Node build fails under Node 20). It takes a fixed port, so pick a free one first.
 */
export async function startPortkeyGateway(env: Record<string, string> = {}): Promise<PortkeyGateway> {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve("@portkey-ai/gateway/package.json");
  const version = (require(packageJson) as { version: string }).version;
  const entry = join(dirname(packageJson), "build/start-server.js");
  const port = freePort();
  const child: ChildChannel = spawnChild(["bun", entry, `--port=${port}`, "--headless"], {
    env,
    fileLimit: 65_536,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answered = await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) break;
    if (Date.now() > deadline) {
      await child.stop(2_000);
      throw new Error(`Portkey gateway did not answer on ${url}:\n${child.output().slice(-3000)}`);
    }
    await Bun.sleep(200);
  }
  return {
    url,
    pid: child.pid,
    version,
    headersFor: (upstreamBaseUrl) => ({
      "x-portkey-provider": "openai",
      "x-portkey-custom-host": upstreamBaseUrl,
      authorization: "Bearer sk-bench-not-a-real-key",
    }),
    stop: async () => {
      await child.stop(5_000);
    },
  };
}
