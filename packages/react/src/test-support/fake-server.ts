import { createPromptrunClient, type PromptrunClient } from "@promptrun/client";
import type { FakeStreamConnection } from "@promptrun/client/testing";

/** The contract fake running in a child process, with its control endpoints wrapped. */
export interface FakeServerHandle {
  url: string;
  apiKey: string;
  /** A server-side client (holds the API key), standing in for the app's backend. */
  client: PromptrunClient;
  dropStreams(): Promise<void>;
  expireTokens(options?: { end?: boolean }): Promise<void>;
  failNextStreamConnections(count: number, status: number): Promise<void>;
  connections(): Promise<FakeStreamConnection[]>;
  openStreams(thread: string): Promise<number>;
  stop(): Promise<void>;
}

/** Spawns `fake-server-process.ts` and waits for its address. */
export async function startFakeServer(): Promise<FakeServerHandle> {
  const child = Bun.spawn(["bun", new URL("./fake-server-process.ts", import.meta.url).pathname], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error("fake server process exited before printing its address");
    text += new TextDecoder().decode(chunk.value);
  }
  reader.releaseLock();
  const { url, apiKey } = JSON.parse(text.split("\n")[0]!) as { url: string; apiKey: string };
  const control = async (path: string) => {
    const response = await fetch(`${url}/__fake/${path}`, { method: "POST" });
    if (!response.ok) throw new Error(`control ${path} answered ${response.status}`);
    return response.json();
  };
  return {
    url,
    apiKey,
    client: createPromptrunClient({ baseUrl: url, apiKey }),
    dropStreams: async () => void (await control("drop-streams")),
    expireTokens: async (options) => void (await control(`expire-tokens?end=${options?.end ? 1 : 0}`)),
    failNextStreamConnections: async (count, status) =>
      void (await control(`fail-stream-connections?count=${count}&status=${status}`)),
    connections: async () => (await control("connections")) as FakeStreamConnection[],
    openStreams: async (thread) =>
      ((await control(`open-streams?thread=${thread}`)) as { open: number }).open,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}
