import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** Provider name under which the stamped upstream is configured (PROMPTRUN_PROVIDERS). */
export const UPSTREAM_PROVIDER = "bench";

export interface BenchPrompt {
  slug: string;
  model: string;
  params?: Record<string, number>;
}

/** Slugs used by the sections: dev:echo, stamped upstream streams, and the gate. */
export const benchPrompts = {
  echo: { slug: "bench-echo", model: "dev:echo", params: { delayMs: 0 } },
  stream200: { slug: "bench-stream-200", model: `${UPSTREAM_PROVIDER}:stamp-200-5` },
  stream2: { slug: "bench-stream-2", model: `${UPSTREAM_PROVIDER}:stamp-2-5` },
  /** Section 2's capacity streams: 50 tokens/s for 5 s (3 s in quick mode). */
  stream50PerSecond: { slug: "bench-stream-50-per-second", model: `${UPSTREAM_PROVIDER}:stamp-250-20` },
  stream50PerSecondQuick: {
    slug: "bench-stream-50-per-second-quick",
    model: `${UPSTREAM_PROVIDER}:stamp-150-20`,
  },
  fanOut50PerSecond: { slug: "bench-fan-out", model: `${UPSTREAM_PROVIDER}:stamp-50-20` },
  burst: { slug: "bench-burst", model: `${UPSTREAM_PROVIDER}:stamp-100-0` },
  gate: { slug: "bench-gate", model: `${UPSTREAM_PROVIDER}:gate` },
} satisfies Record<string, BenchPrompt>;

const yamlOf = (prompt: BenchPrompt) =>
  [
    `slug: ${prompt.slug}`,
    `model: ${prompt.model}`,
    ...(prompt.params ? [`params: ${JSON.stringify(prompt.params)}`] : []),
    "inputs:",
    "  message: { type: string }",
    "messages:",
    '  - { role: user, content: "{{message}}" }',
    "",
  ].join("\n");

/** Writes the bench prompt files into `directory/prompts` and returns that folder. */
export async function writeBenchPrompts(directory: string): Promise<string> {
  const folder = join(directory, "prompts");
  mkdirSync(folder, { recursive: true });
  for (const prompt of Object.values(benchPrompts))
    await Bun.write(join(folder, `${prompt.slug}.yaml`), yamlOf(prompt));
  return folder;
}
