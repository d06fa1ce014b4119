import { benchPrompts } from "../bench-prompts.ts";
import { engineStats, parkExecutionSlots, startBenchServer } from "../bench-server.ts";
import { spawnChild } from "../child-channel.ts";
import { formatCores, formatCount, formatMs, formatPercent } from "../format.ts";
import { type LoadTestOptions, type LoadTestResult, loadTest } from "../load-test.ts";
import { markdownTable } from "../markdown-table.ts";
import { startCpuWindow } from "../process-stats.ts";
import type { BenchContext, SectionResult } from "./bench-context.ts";

const HELLO_SCRIPT = `${import.meta.dir}/../processes/hello-server.ts`;
/** Floors for any create endpoint, served by the hello-world process (see hello-server.ts). */
const FLOORS = [
  ["Bun.serve POST floor: read the JSON body, answer 202", "/post"],
  ["Bun.serve POST + SQLite insert (group commit, synchronous=FULL)", "/insert"],
] as const;
/** The default per-tenant limit: parking this many slots stops the demo tenant's execution. */
const TENANT_SLOTS = 8;

interface Measured {
  result: LoadTestResult;
  serverCores: number;
  generatorCores: number;
}

/** Warm up, then measure with the target's CPU use over the measured window. */
async function measure(options: LoadTestOptions, pid: number, warmSeconds: number): Promise<Measured> {
  await loadTest({ ...options, durationSeconds: warmSeconds });
  const stop = startCpuWindow([pid]);
  const result = await loadTest(options);
  const window = stop();
  return {
    result,
    serverCores: (window.cpuSeconds[pid] ?? Number.NaN) / window.wallSeconds,
    generatorCores: result.generatorCpuSeconds / window.wallSeconds,
  };
}

/** 1. Create-run throughput and latency vs the bare Bun.serve hello-world, same run, same generator. */
export async function createRunSection(context: BenchContext): Promise<SectionResult> {
  const levels = [1, 100, 200];
  const seconds = context.quick ? 3 : 8;
  const warmSeconds = context.quick ? 1 : 2;
  const hello = spawnChild(["bun", HELLO_SCRIPT], { fileLimit: 4096 });
  const { url: helloUrl } = await hello.next<{ type: string; url: string }>("ready", 30_000);
  const createBody = JSON.stringify({ inputs: { message: "hello bench" } });
  const rows: Array<Array<string | number>> = [];
  const byLevel = new Map<number, { hello: Measured; create: Measured }>();
  let tool = "";
  try {
    for (const connections of levels) {
      context.log(`create-run: hello-world at ${connections} connections`);
      const helloMeasured = await measure(
        { url: `${helloUrl}/`, connections, durationSeconds: seconds, scratchDir: context.scratchDir },
        hello.pid,
        warmSeconds,
      );
      context.log(`create-run: Promptrun at ${connections} connections`);
      const server = await startBenchServer({
        promptsDir: context.promptsDir,
        upstreamUrl: context.upstream.url,
      });
      try {
        await parkExecutionSlots(server, context.upstream.url, benchPrompts.gate.slug, TENANT_SLOTS);
        const createMeasured = await measure(
          {
            url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`,
            connections,
            durationSeconds: seconds,
            scratchDir: context.scratchDir,
            request: {
              method: "POST",
              body: createBody,
              headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.apiKey}` },
            },
          },
          server.pid,
          warmSeconds,
        );
        const queued = (await engineStats(server)).queued;
        byLevel.set(connections, { hello: helloMeasured, create: createMeasured });
        tool = createMeasured.result.tool;
        for (const [name, measured] of [
          ["Bun.serve hello-world", helloMeasured],
          ["Promptrun create-run", createMeasured],
        ] as const) {
          rows.push([
            name,
            connections,
            formatCount(measured.result.requestsPerSecond),
            formatMs(measured.result.p50Ms),
            formatMs(measured.result.p99Ms),
            formatCount(measured.result.failures),
            formatCores(measured.serverCores),
            formatCores(measured.generatorCores),
            measured === createMeasured
              ? `${formatPercent(createMeasured.result.requestsPerSecond / helloMeasured.result.requestsPerSecond)} (${formatCount(queued)} runs queued)`
              : "",
          ]);
        }
      } finally {
        await server.dispose(2_000);
      }
    }
    const helloAt100 = byLevel.get(100)?.hello.result.requestsPerSecond ?? Number.NaN;
    for (const [name, path] of FLOORS) {
      context.log(`create-run: ${name} at 100 connections`);
      const measured = await measure(
        {
          url: `${helloUrl}${path}`,
          connections: 100,
          durationSeconds: seconds,
          scratchDir: context.scratchDir,
          request: { method: "POST", body: createBody, headers: { "Content-Type": "application/json" } },
        },
        hello.pid,
        warmSeconds,
      );
      rows.push([
        name,
        100,
        formatCount(measured.result.requestsPerSecond),
        formatMs(measured.result.p50Ms),
        formatMs(measured.result.p99Ms),
        formatCount(measured.result.failures),
        formatCores(measured.serverCores),
        formatCores(measured.generatorCores),
        formatPercent(measured.result.requestsPerSecond / helloAt100),
      ]);
    }
  } finally {
    await hello.stop();
  }

  const live = await liveExecutionRow(context, seconds, warmSeconds);
  const at100 = byLevel.get(100);
  const ratio = at100
    ? at100.create.result.requestsPerSecond / at100.hello.result.requestsPerSecond
    : Number.NaN;
  const p99 = at100?.create.result.p99Ms ?? Number.NaN;
  const body = [
    `Load generator: ${tool === "wrk" ? "wrk (1 thread, keep-alive, Lua script for the POST body)" : "Bun keep-alive fetch generator"} in its own process; ${warmSeconds} s warm-up then ${seconds} s measured per row. ` +
      `Each Promptrun row uses a fresh server and SQLite file; ${TENANT_SLOTS} runs of a prompt whose upstream holds them keep the demo tenant's execution slots busy, so every created run stays queued and the rows measure accepting a run alone (auth, validation, prompt lookup, the synchronous=FULL group commit, enqueue). ` +
      '"cores" = CPU seconds / wall seconds of the server process and of the load generator over the measured window. ' +
      "The two floor rows (100 connections, same process as the hello-world) do only what any create endpoint must: read the JSON body and answer 202 with a Location header, then the same after a run-sized SQLite insert (UUIDv7 key, three indexes) whose commit is shared by the requests of one event-loop turn — no auth, validation, lookups, scheduling or metrics.",
    "",
    markdownTable(
      [
        "target",
        "connections",
        "req/s",
        "p50 ms",
        "p99 ms",
        "failures",
        "server cores",
        "generator cores",
        "vs hello-world",
      ],
      rows,
    ),
    "",
    live,
  ].join("\n");
  return {
    title: "1. Create-run throughput and latency",
    body,
    targets: [
      {
        target: "create-run at 100 connections ≥ 30 % of hello-world req/s",
        measured: formatPercent(ratio),
        met: ratio >= 0.3,
      },
      { target: "create-run at 100 connections p99 < 25 ms", measured: `${formatMs(p99)} ms`, met: p99 < 25 },
    ],
  };
}

/** The same load with runs executing (dev:echo) alongside, for contrast. */
async function liveExecutionRow(
  context: BenchContext,
  seconds: number,
  warmSeconds: number,
): Promise<string> {
  context.log("create-run: Promptrun at 100 connections with runs executing");
  const server = await startBenchServer({
    promptsDir: context.promptsDir,
    upstreamUrl: context.upstream.url,
    env: { PROMPTRUN_CONCURRENCY: "32", PROMPTRUN_TENANT_CONCURRENCY: "32" },
  });
  try {
    const measured = await measure(
      {
        url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`,
        connections: 100,
        durationSeconds: seconds,
        scratchDir: context.scratchDir,
        request: {
          method: "POST",
          body: JSON.stringify({ inputs: { message: "hello bench" } }),
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.apiKey}` },
        },
      },
      server.pid,
      warmSeconds,
    );
    const stats = await engineStats(server);
    return (
      `With execution live (dev:echo, concurrency 32, fresh server): ${formatCount(measured.result.requestsPerSecond)} req/s, ` +
      `p50 ${formatMs(measured.result.p50Ms)} ms, p99 ${formatMs(measured.result.p99Ms)} ms, ${formatCount(measured.result.failures)} failures, ` +
      `server ${formatCores(measured.serverCores)} cores; ${formatCount(stats.queued)} runs still queued at the end ` +
      "(runs are accepted faster than they execute; section 4 measures execution)."
    );
  } finally {
    await server.dispose(2_000);
  }
}
