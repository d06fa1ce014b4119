/**
 * N Promptrun instances on one Postgres database and one Redis, each its own process on
 * 127.0.0.1 (as in docs/DEPLOYMENT.md): the first seeds the demo tenant and gets the bench
 * prompts; the others join the same database.
 */
import { benchPrompts } from "./bench-prompts.ts";
import { createRun, engineStats, pollUntil, startBenchServer } from "./bench-server.ts";
import { type PromptrunServer, startPromptrunServer } from "./promptrun-server.ts";

export interface ScaleOutCluster {
  instances: PromptrunServer[];
  apiKey: string;
  /** Stops every instance and deletes the shared scratch directory. */
  dispose(): Promise<void>;
}

export async function startScaleOutCluster(options: {
  count: number;
  promptsDir: string;
  upstreamUrl: string;
  /** DATABASE_URL, REDIS_URL, PROMPTRUN_REDIS_PREFIX and any limits. */
  env: Record<string, string>;
}): Promise<ScaleOutCluster> {
  const first = await startBenchServer({
    promptsDir: options.promptsDir,
    upstreamUrl: options.upstreamUrl,
    env: options.env,
  });
  const instances = [first];
  const dispose = async () => {
    await Promise.all(instances.slice(1).map((instance) => instance.stop(3_000)));
    await first.dispose(3_000);
  };
  try {
    for (let index = 1; index < options.count; index++) {
      instances.push(
        await startPromptrunServer({
          reuse: first,
          env: {
            PROMPTRUN_PROVIDERS: `bench=${options.upstreamUrl}/v1`,
            ...options.env,
            PROMPTRUN_SEED_DEMO: "false",
          },
        }),
      );
    }
  } catch (error) {
    await dispose();
    throw error;
  }
  return { instances, apiKey: first.apiKey, dispose };
}

/**
 * Holds `count` of the tenant's execution slots (a cluster-wide limit) with gate runs sent to
 * every instance, so runs created afterwards stay queued and create-run is measured alone.
 */
export async function parkClusterSlots(cluster: ScaleOutCluster, upstreamUrl: string, count: number) {
  await fetch(`${upstreamUrl}/control/close-gate`, { method: "POST" });
  const { instances, apiKey } = cluster;
  await Promise.all(
    Array.from({ length: count }, (_, index) =>
      createRun({ url: instances[index % instances.length]!.url, apiKey }, benchPrompts.gate.slug),
    ),
  );
  const executing = async () =>
    (await Promise.all(instances.map((instance) => engineStats(instance)))).reduce(
      (sum, stats) => sum + stats.executing,
      0,
    );
  if (!(await pollUntil(async () => (await executing()) >= count, 20_000))) {
    throw new Error(`only ${await executing()} of ${count} slots parked across the cluster`);
  }
}
