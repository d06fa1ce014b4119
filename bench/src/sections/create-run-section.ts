import { benchPrompts } from "../bench-prompts.ts";
import { engineStats, parkExecutionSlots, startBenchServer } from "../bench-server.ts";
import { spawnChild } from "../child-channel.ts";
import {
  cpuMicrosecondsPerRequest,
  durableFloorTargets,
  formatMicroseconds,
  multiCoreTargets,
} from "../create-run-targets.ts";
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
/** The floor issue #24's target 1 measures create-run against. */
const DURABLE_FLOOR = FLOORS[1][0];
const LEVELS = [1, 100, 200];
const CREATE_BODY = JSON.stringify({ inputs: { message: "hello bench" } });
/** The default per-tenant limit: parking this many slots stops the demo tenant's execution. */
const TENANT_SLOTS = 8;

interface Measured {
  result: LoadTestResult;
  serverCores: number;
  generatorCores: number;
  /** Server CPU over the measured window / requests it answered successfully in it. */
  serverCpuMicrosecondsPerRequest: number;
}

/**
 * Warm up, then measure with the target's CPU use over the measured window. The CPU reading also
 * spans the generator's start and exit, when the server idles: cores are CPU seconds over the
 * load's own duration, so that start-up (a second for the Bun generator on a busy machine) does
 * not dilute them.
 */
async function measure(options: LoadTestOptions, pid: number, warmSeconds: number): Promise<Measured> {
  await loadTest({ ...options, durationSeconds: warmSeconds });
  const stop = startCpuWindow([pid]);
  const result = await loadTest(options);
  const serverCpuSeconds = stop().cpuSeconds[pid] ?? Number.NaN;
  return {
    result,
    serverCores: serverCpuSeconds / result.durationSeconds,
    generatorCores: result.generatorCpuSeconds / result.durationSeconds,
    serverCpuMicrosecondsPerRequest: cpuMicrosecondsPerRequest(
      serverCpuSeconds,
      result.totalRequests - result.failures,
    ),
  };
}

/** One table row: the load's figures, the server's CPU, and how it compares. */
function tableRow(name: string, connections: number, measured: Measured, versus: string) {
  return [
    name,
    connections,
    formatCount(measured.result.requestsPerSecond),
    formatMs(measured.result.p50Ms),
    formatMs(measured.result.p99Ms),
    formatCount(measured.result.failures),
    formatCores(measured.serverCores),
    formatMicroseconds(measured.serverCpuMicrosecondsPerRequest),
    formatCores(measured.generatorCores),
    versus,
  ];
}

/** 1. Create-run throughput and latency vs the bare Bun.serve hello-world and the create floors, same run, same generator. */
export async function createRunSection(context: BenchContext): Promise<SectionResult> {
  const seconds = context.quick ? 3 : 8;
  const warmSeconds = context.quick ? 1 : 2;
  const hello = spawnChild(["bun", HELLO_SCRIPT], { fileLimit: 4096 });
  const { url: helloUrl } = await hello.next<{ type: string; url: string }>("ready", 30_000);
  let levels: LevelRows;
  const floors = new Map<string, Measured>();
  try {
    levels = await measureLevels(context, helloUrl, hello.pid, seconds, warmSeconds);
    const helloAt100 = levels.byLevel.get(100)?.hello.result.requestsPerSecond ?? Number.NaN;
    for (const [name, path] of FLOORS) {
      context.log(`create-run: ${name} at 100 connections`);
      const measured = await measure(
        {
          url: `${helloUrl}${path}`,
          connections: 100,
          durationSeconds: seconds,
          scratchDir: context.scratchDir,
          request: { method: "POST", body: CREATE_BODY, headers: { "Content-Type": "application/json" } },
        },
        hello.pid,
        warmSeconds,
      );
      floors.set(name, measured);
      levels.rows.push(
        tableRow(name, 100, measured, formatPercent(measured.result.requestsPerSecond / helloAt100)),
      );
    }
  } finally {
    await hello.stop();
  }

  const live = await liveExecutionRow(context, seconds, warmSeconds);
  const at100 = levels.byLevel.get(100);
  const ratio = at100
    ? at100.create.result.requestsPerSecond / at100.hello.result.requestsPerSecond
    : Number.NaN;
  const p99 = at100?.create.result.p99Ms ?? Number.NaN;
  const durableFloor = floors.get(DURABLE_FLOOR);
  const figures = (measured: Measured | undefined) => ({
    requestsPerSecond: measured?.result.requestsPerSecond ?? Number.NaN,
    p99Ms: measured?.result.p99Ms ?? Number.NaN,
    cpuMicrosecondsPerRequest: measured?.serverCpuMicrosecondsPerRequest ?? Number.NaN,
  });
  const body = [
    `Load generator: ${levels.tool === "wrk" ? "wrk (1 thread, keep-alive, Lua script for the POST body)" : "Bun keep-alive fetch generator"} in its own process; ${warmSeconds} s warm-up then ${seconds} s measured per row. ` +
      `Each Promptrun row uses a fresh server and SQLite file; ${TENANT_SLOTS} runs of a prompt whose upstream holds them keep the demo tenant's execution slots busy, so every created run stays queued and the rows measure accepting a run alone (auth, validation, prompt lookup, the synchronous=FULL group commit, enqueue). ` +
      '"cores" = CPU seconds of the server process and of the load generator over the measured window / the load\'s duration (the CPU reading starts before the generator is spawned and ends after it exits, while the server idles). ' +
      '"server CPU µs per request" = CPU seconds of the process that answers (the Promptrun server; the hello-world process for the hello-world and floor rows) over the same window / the requests it answered successfully in it; for create-run that is the CPU per accepted run. ' +
      "The two floor rows (100 connections, same process as the hello-world) do only what any create endpoint must: read the JSON body and answer 202 with a Location header, then the same after a run-sized SQLite insert (UUIDv7 key, three indexes) whose commit is shared by the requests of one event-loop turn — no auth, validation, lookups, scheduling or metrics. " +
      `Issue #24's target 1 compares create-run at 100 connections with the second floor (the durable insert) measured in this run; target 2's cores are the server's (today one process with one JavaScript thread) at 100 connections. The targets marked "earlier target" are the first round's, kept to show no regression.`,
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
        "server CPU µs per request",
        "generator cores",
        "vs hello-world",
      ],
      levels.rows,
    ),
    "",
    live,
  ].join("\n");
  return {
    title: "1. Create-run throughput and latency",
    body,
    targets: [
      ...durableFloorTargets(figures(at100?.create), figures(durableFloor)),
      ...multiCoreTargets(at100?.create.serverCores ?? Number.NaN),
      {
        target: "earlier target: create-run at 100 connections ≥ 30 % of hello-world req/s",
        measured: formatPercent(ratio),
        met: ratio >= 0.3,
      },
      {
        target: "earlier target: create-run at 100 connections p99 < 25 ms",
        measured: `${formatMs(p99)} ms`,
        met: p99 < 25,
      },
    ],
  };
}

interface LevelRows {
  rows: Array<Array<string | number>>;
  byLevel: Map<number, { hello: Measured; create: Measured }>;
  tool: string;
}

/** Hello-world, then create-run on a fresh server with the execution slots parked, at each level. */
async function measureLevels(
  context: BenchContext,
  helloUrl: string,
  helloPid: number,
  seconds: number,
  warmSeconds: number,
): Promise<LevelRows> {
  const rows: LevelRows["rows"] = [];
  const byLevel: LevelRows["byLevel"] = new Map();
  let tool = "";
  for (const connections of LEVELS) {
    context.log(`create-run: hello-world at ${connections} connections`);
    const helloMeasured = await measure(
      { url: `${helloUrl}/`, connections, durationSeconds: seconds, scratchDir: context.scratchDir },
      helloPid,
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
            body: CREATE_BODY,
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.apiKey}` },
          },
        },
        server.pid,
        warmSeconds,
      );
      const queued = (await engineStats(server)).queued;
      byLevel.set(connections, { hello: helloMeasured, create: createMeasured });
      tool = createMeasured.result.tool;
      const versus = createMeasured.result.requestsPerSecond / helloMeasured.result.requestsPerSecond;
      rows.push(
        tableRow("Bun.serve hello-world", connections, helloMeasured, ""),
        tableRow(
          "Promptrun create-run",
          connections,
          createMeasured,
          `${formatPercent(versus)} (${formatCount(queued)} runs queued)`,
        ),
      );
    } finally {
      await server.dispose(2_000);
    }
  }
  return { rows, byLevel, tool };
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
          body: CREATE_BODY,
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
