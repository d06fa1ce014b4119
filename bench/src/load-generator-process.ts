import { spawnChild } from "./child-channel.ts";
import type { HttpLoadOptions, HttpLoadResult } from "./http-load.ts";

export interface LoadGeneratorResult extends HttpLoadResult {
  /** CPU seconds the load generator process used. */
  cpuSeconds: number;
}

const SCRIPT = `${import.meta.dir}/processes/load-generator.ts`;

/** Runs runHttpLoad in a separate Bun process and returns its result with its CPU use. */
export async function runLoadGeneratorProcess(options: HttpLoadOptions): Promise<LoadGeneratorResult> {
  const child = spawnChild(["bun", SCRIPT, JSON.stringify(options)], {
    // Bun's fetch caps concurrent requests at 256 by default.
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: String(Math.max(256, options.concurrency * 2)) },
    fileLimit: options.concurrency * 2 + 256,
  });
  const timeoutMs = (options.durationMs ?? 600_000) + 60_000;
  const result = await child.next<HttpLoadResult & { type: string }>("result", timeoutMs);
  await child.exited;
  const { type: _type, ...rest } = result;
  return { ...rest, cpuSeconds: child.cpuSeconds() ?? Number.NaN };
}
