import { spawnChild } from "./child-channel.ts";

const RELAY_SCRIPT = `${import.meta.dir}/processes/bare-relay.ts`;

export interface BareRelay {
  /** `http://127.0.0.1:<port>`: POST …/chat/completions as to an OpenAI-compatible upstream. */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The bare relay floor (processes/bare-relay.ts) in front of the stamped upstream. */
export async function startBareRelay(
  upstreamUrl: string,
  env: Record<string, string> = {},
): Promise<BareRelay> {
  const child = spawnChild(["bun", RELAY_SCRIPT], {
    env: { ...env, UPSTREAM_URL: upstreamUrl },
    fileLimit: 65_536,
  });
  try {
    const { url } = await child.next<{ type: string; url: string }>("ready", 30_000);
    return { url, pid: child.pid, stop: async () => void (await child.stop(5_000)) };
  } catch (error) {
    await child.stop(2_000);
    throw error;
  }
}
