import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { benchPrompts } from "../bench-prompts.ts";
import { createRun, mintStreamToken, startBenchServer } from "../bench-server.ts";
import { spawnChild } from "../child-channel.ts";
import {
  type CpuProfile,
  componentOf,
  parseCpuProfileMarkdown,
  selfTimeByComponent,
  shortLocation,
} from "../cpu-profile.ts";
import { formatCount, formatMs } from "../format.ts";
import { loadTest } from "../load-test.ts";
import { markdownTable } from "../markdown-table.ts";
import type { PromptrunServer } from "../promptrun-server.ts";
import { openSubscriberPool } from "../sse-subscriber-pool.ts";
import type { BenchContext, SectionResult } from "./bench-context.ts";

const CLIENT_SCRIPT = `${import.meta.dir}/../processes/stream-client.ts`;

interface Workload {
  name: string;
  env: Record<string, string>;
  /** Drives the server; returns one line saying what was done. */
  drive(server: PromptrunServer, context: BenchContext): Promise<string>;
}

const WORKLOADS: Workload[] = [
  {
    name: "create-run with execution (dev:echo)",
    env: { PROMPTRUN_CONCURRENCY: "32", PROMPTRUN_TENANT_CONCURRENCY: "32" },
    async drive(server, context) {
      const result = await loadTest({
        url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`,
        connections: 100,
        durationSeconds: context.quick ? 3 : 5,
        scratchDir: context.scratchDir,
        request: {
          method: "POST",
          body: JSON.stringify({ inputs: { message: "hello bench" } }),
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.apiKey}` },
        },
      });
      return `${formatCount(result.totalRequests)} runs created at 100 connections (${formatCount(result.requestsPerSecond)} req/s)`;
    },
  },
  {
    name: "100 streams of 200 tokens through Promptrun",
    env: { PROMPTRUN_CONCURRENCY: "256", PROMPTRUN_TENANT_CONCURRENCY: "256" },
    async drive(server) {
      const client = spawnChild(["bun", CLIENT_SCRIPT], {
        env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "1024" },
        fileLimit: 8192,
      });
      try {
        await client.next("ready", 30_000);
        client.send({
          type: "run",
          mode: "promptrun",
          baseUrl: server.url,
          apiKey: server.apiKey,
          slug: benchPrompts.stream200.slug,
          concurrency: 100,
          total: 200,
          expectedTokens: 200,
          timeoutMs: 60_000,
        });
        const result = await client.next<{ type: string; timings: unknown[]; errors: number }>(
          "result",
          180_000,
        );
        return `${result.timings.length} streams (${result.errors} failed), 100 at a time`;
      } finally {
        client.send({ type: "exit" });
        await client.stop(2_000);
      }
    },
  },
  {
    name: "one thread, 2,000 subscribers, 100-token burst",
    env: {},
    async drive(server) {
      const thread = crypto.randomUUID();
      const subscription = await mintStreamToken(server, thread);
      const pool = await openSubscriberPool({
        host: server.host,
        port: server.port,
        workers: 1,
        subscriptions: Array.from({ length: 2_000 }, () => subscription),
      });
      try {
        for (let round = 0; round < 3; round++) {
          await pool.reset();
          await createRun(server, benchPrompts.burst.slug, { thread });
          await pool.waitFor({ deliveries: pool.ready * 100, completed: pool.ready }, 60_000);
        }
        return `${formatCount(pool.ready)} subscribers × 3 runs of 100 tokens`;
      } finally {
        await pool.close();
      }
    },
  },
];

function renderProfile(workload: Workload, done: string, profile: CpuProfile): string {
  const busy = (profile.samples * profile.intervalMs) / 1000 / profile.durationSeconds;
  const components = selfTimeByComponent(profile).slice(0, 8);
  const top = profile.hot.slice(0, 12);
  return [
    `### ${workload.name}`,
    "",
    `${done}. Profile: ${profile.durationSeconds.toFixed(1)} s, ${formatCount(profile.samples)} samples of ${formatMs(profile.intervalMs)} ms (the JavaScript thread was sampled busy ${(busy * 100).toFixed(0)} % of the time, start-up included).`,
    "",
    `Self time by component: ${components.map((entry) => `${entry.component} ${entry.selfPercent.toFixed(1)} %`).join(", ")}.`,
    "",
    markdownTable(
      ["self %", "self ms", "total %", "function", "where", "called by (samples)"],
      top.map((entry) => [
        entry.selfPercent.toFixed(1),
        formatMs(entry.selfMs),
        entry.totalPercent.toFixed(1),
        `\`${entry.name}\``,
        componentOf(entry.location) === "native (Bun runtime)"
          ? "native"
          : `\`${shortLocation(entry.location)}\``,
        entry.calledBy
          .slice(0, 4)
          .map((caller) => `${caller.name} (${caller.samples})`)
          .join(", "),
      ]),
    ),
  ].join("\n");
}

/** 5. CPU profiles of the server (`bun --cpu-prof-md`) under three workloads, one server each. */
export async function profileSection(context: BenchContext): Promise<SectionResult> {
  const parts: string[] = [];
  for (const [index, workload] of WORKLOADS.entries()) {
    context.log(`profile: ${workload.name}`);
    const directory = join(context.scratchDir, `profile-${index}`);
    mkdirSync(directory, { recursive: true });
    const server = await startBenchServer({
      promptsDir: context.promptsDir,
      upstreamUrl: context.upstream.url,
      env: workload.env,
      bunFlags: ["--cpu-prof-md", `--cpu-prof-dir=${directory}`],
    });
    let done: string;
    try {
      done = await workload.drive(server, context);
    } finally {
      // The profile is written when the server exits after SIGTERM.
      await server.dispose(20_000);
    }
    const file = readdirSync(directory).find((name) => name.endsWith(".md"));
    if (!file) throw new Error(`no CPU profile was written for '${workload.name}'`);
    parts.push(
      renderProfile(workload, done, parseCpuProfileMarkdown(readFileSync(join(directory, file), "utf8"))),
    );
  }
  const body = [
    "Each workload runs against its own server started as `bun --cpu-prof-md --cpu-prof-dir=… apps/server/src/cli.ts serve`; the profile covers the whole life of that process (start-up, prompt push, the workload, shutdown). " +
      "Self time is where the JavaScript thread was when sampled; `native` is Bun's own code (SQLite, streams, HTTP) with its JavaScript callers beside it. " +
      "A function called a handful of times that shows a large self time (an auth or lookup function during start-up, for instance) has usually had a garbage collection or JIT compilation charged to it.",
    "",
    ...parts.flatMap((part) => [part, ""]),
  ].join("\n");
  return { title: "5. Where the time goes (CPU profiles)", body, targets: [] };
}
