import { readFileSync } from "node:fs";
import { benchPrompts } from "../bench-prompts.ts";
import { createRun, mapConcurrently, mintStreamToken, startBenchServer } from "../bench-server.ts";
import { wallClockMs } from "../clock.ts";
import { formatCores, formatCount, formatKb, formatMs } from "../format.ts";
import { LatencyHistogram } from "../latency-histogram.ts";
import { markdownTable } from "../markdown-table.ts";
import { readRssKb, startCpuWindow } from "../process-stats.ts";
import type { PromptrunServer } from "../promptrun-server.ts";
import {
  openSubscriberPool,
  type PoolReport,
  type SubscriberPool,
  type Subscription,
} from "../sse-subscriber-pool.ts";
import type { BenchContext, SectionResult, TargetCheck } from "./bench-context.ts";

const SUBSCRIBERS_PER_WORKER = 5_000;
const FAN_OUT_TOKENS = 50;
const BURST_TOKENS = 100;
/** A fan-out run lasts one second (50 tokens at 50/s): starting this many per second keeps that many streaming. */
const STEADY_STREAMS = 200;
/** Concurrency is still ramping up during the first run's second; latency is taken after it. */
const STEADY_RAMP_MS = 1_500;
/** Runs created together for the all-at-once row. */
const ALL_AT_ONCE_RUNS = 200;

/** Several pools measured as one. */
async function reportAll(pools: SubscriberPool[]): Promise<PoolReport> {
  const reports = await Promise.all(pools.map((pool) => pool.report()));
  const latency = new LatencyHistogram();
  for (const part of reports) latency.merge(part.latency);
  const starts = reports.map((part) => part.firstDeliveryAt).filter((at) => at > 0);
  return {
    deliveries: reports.reduce((sum, part) => sum + part.deliveries, 0),
    completed: reports.reduce((sum, part) => sum + part.completed, 0),
    closed: reports.reduce((sum, part) => sum + part.closed, 0),
    firstDeliveryAt: starts.length ? Math.min(...starts) : 0,
    lastDeliveryAt: Math.max(0, ...reports.map((part) => part.lastDeliveryAt)),
    latency,
  };
}

async function waitAll(
  pools: SubscriberPool[],
  target: { deliveries: number; completed: number },
  timeoutMs: number,
): Promise<PoolReport> {
  const deadline = Date.now() + timeoutMs;
  let seen = -1;
  let lastProgressAt = Date.now();
  for (;;) {
    const current = await reportAll(pools);
    if (current.deliveries >= target.deliveries && current.completed >= target.completed) return current;
    const progress = current.deliveries + current.completed;
    if (progress !== seen) {
      seen = progress;
      lastProgressAt = Date.now();
    }
    if (Date.now() > deadline || Date.now() - lastProgressAt > 5_000) return current;
    await Bun.sleep(200);
  }
}

const workersFor = (subscribers: number) => Math.max(1, Math.ceil(subscribers / SUBSCRIBERS_PER_WORKER));

/** RSS settles a moment after a burst of connections. */
const settledRssKb = async (pid: number) => {
  await Bun.sleep(1_000);
  return readRssKb(pid);
};

interface Measured {
  report: PoolReport;
  serverCpuSeconds: number;
  subscriberCores: number;
  wallSeconds: number;
  /** How long the server's JavaScript thread was ready to run but waited for a core (other processes had them). */
  serverWaitedMs: number;
}

/**
 * Milliseconds the process's main thread has spent runnable but not running (run_delay in
 * /proc/<pid>/schedstat): on a shared machine, latency the server could not have avoided.
 */
function readRunQueueDelayMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
}

/** Resets the counters, starts runs, waits for every delivery; CPU over the same window. */
async function measureDelivery(
  server: PromptrunServer,
  pools: SubscriberPool[],
  start: () => Promise<unknown>,
  expected: { deliveries: number; completed: number },
  sendWindow?: { sentFrom: number; sentTo: number },
): Promise<Measured> {
  await Promise.all(pools.map((pool) => pool.reset(sendWindow)));
  const workerPids = pools.flatMap((pool) => pool.pids);
  const stop = startCpuWindow([server.pid, ...workerPids]);
  const delayBefore = readRunQueueDelayMs(server.pid);
  await start();
  const report = await waitAll(pools, expected, 120_000);
  const window = stop();
  const serverWaitedMs = readRunQueueDelayMs(server.pid) - delayBefore;
  const subscriberCpu = workerPids.reduce((sum, pid) => sum + (window.cpuSeconds[pid] ?? 0), 0);
  return {
    report,
    serverCpuSeconds: window.cpuSeconds[server.pid] ?? Number.NaN,
    subscriberCores: subscriberCpu / window.wallSeconds,
    wallSeconds: window.wallSeconds,
    serverWaitedMs,
  };
}

/**
 * Starts one fan-out run on each thread, `perSecond` of them per second from `startAt` on a fixed
 * schedule (an open loop: a slow server does not slow the arrivals). Resolves when every create
 * has answered.
 */
async function startRunsAtRate(
  server: PromptrunServer,
  threads: string[],
  perSecond: number,
  startAt: number,
): Promise<void> {
  const creates: Array<Promise<string>> = [];
  for (let index = 0; index < threads.length; index++) {
    const due = startAt + (index * 1000) / perSecond;
    const wait = due - wallClockMs();
    if (wait > 1) await Bun.sleep(wait);
    creates.push(createRun(server, benchPrompts.fanOut50PerSecond.slug, { thread: threads[index]! }));
  }
  await Promise.all(creates);
}

const waitedCell = (measured: Measured) =>
  `${formatMs(measured.serverWaitedMs)} ms (${(measured.serverWaitedMs / 10 / measured.wallSeconds || 0).toFixed(1)} % of the window)`;

const deliveryCells = (measured: Measured, expected: number) => [
  `${formatCount(measured.report.deliveries)} / ${formatCount(expected)}`,
  formatMs(measured.report.latency.percentile(50)),
  formatMs(measured.report.latency.percentile(99)),
  formatCores(measured.serverCpuSeconds / measured.wallSeconds),
  formatCores(measured.subscriberCores),
];

/** 3. SSE fan-out: many subscribers on one thread, and 10k subscribers on 10k threads. */
export async function fanOutSection(context: BenchContext): Promise<SectionResult> {
  const levels = context.quick ? [1_000, 10_000] : [1_000, 5_000, 10_000];
  const targets: TargetCheck[] = [];
  const oneThreadRows: Array<Array<string | number>> = [];
  let burstLine = "";

  // One thread, growing audience.
  {
    const server = await startBenchServer({
      promptsDir: context.promptsDir,
      upstreamUrl: context.upstream.url,
    });
    const pools: SubscriberPool[] = [];
    try {
      const thread = crypto.randomUUID();
      const subscription = await mintStreamToken(server, thread);
      await createRun(server, benchPrompts.echo.slug);
      const baselineKb = await settledRssKb(server.pid);
      let open = 0;
      for (const level of levels) {
        context.log(`fan-out: ${level} subscribers on one thread`);
        const adding = level - open;
        const pool = await openSubscriberPool({
          host: server.host,
          port: server.port,
          workers: workersFor(adding),
          subscriptions: Array.from({ length: adding }, () => subscription),
        });
        pools.push(pool);
        open += pool.ready;
        if (pool.failed) throw new Error(`${pool.failed} subscribers failed to open: ${pool.firstError}`);
        const rssKb = await settledRssKb(server.pid);
        const measured = await measureDelivery(
          server,
          pools,
          () => createRun(server, benchPrompts.fanOut50PerSecond.slug, { thread }),
          { deliveries: open * FAN_OUT_TOKENS, completed: open },
        );
        oneThreadRows.push([
          formatCount(open),
          formatKb((rssKb - baselineKb) / open),
          ...deliveryCells(measured, open * FAN_OUT_TOKENS),
        ]);
      }
      context.log(`fan-out: burst of ${BURST_TOKENS} tokens to ${open} subscribers`);
      const burst = await measureDelivery(
        server,
        pools,
        () => createRun(server, benchPrompts.burst.slug, { thread }),
        { deliveries: open * BURST_TOKENS, completed: open },
      );
      const deliveries = burst.report.deliveries;
      const spanSeconds = (burst.report.lastDeliveryAt - burst.report.firstDeliveryAt) / 1000;
      const perCore = deliveries / burst.serverCpuSeconds;
      burstLine =
        `One thread broadcasting ${BURST_TOKENS} tokens (sent back to back by the upstream) to ${formatCount(open)} subscribers: ` +
        `${formatCount(deliveries)} of ${formatCount(open * BURST_TOKENS)} deliveries in ${spanSeconds.toFixed(2)} s from first to last ` +
        `(${formatCount(deliveries / spanSeconds)} deliveries/s wall), server CPU ${burst.serverCpuSeconds.toFixed(2)} s → ` +
        `**${formatCount(perCore)} deliveries per server CPU-second**; p50 ${formatMs(burst.report.latency.percentile(50))} ms, ` +
        `p99 ${formatMs(burst.report.latency.percentile(99))} ms; subscriber processes used ${formatCores(burst.subscriberCores)} cores; ` +
        `${formatCount(burst.report.closed)} connections were closed by the server.`;
      targets.push({
        target: "one thread to 10k subscribers ≥ 300k deliveries/s per core",
        measured: `${formatCount(perCore)} per server CPU-second`,
        met: open >= 10_000 && perCore >= 300_000,
      });
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
      await server.dispose(5_000);
    }
  }

  // 10k threads, 200 of them streaming at 50 tokens/s.
  let manyThreadsTable = "";
  {
    const threadCount = 10_000;
    const activeRuns = ALL_AT_ONCE_RUNS;
    const server = await startBenchServer({
      promptsDir: context.promptsDir,
      upstreamUrl: context.upstream.url,
      env: { PROMPTRUN_CONCURRENCY: "256", PROMPTRUN_TENANT_CONCURRENCY: "256" },
    });
    let pool: SubscriberPool | null = null;
    try {
      context.log(`fan-out: minting ${threadCount} stream tokens`);
      const threads = Array.from({ length: threadCount }, () => crypto.randomUUID());
      const subscriptions: Subscription[] = await mapConcurrently(threads, 32, (thread) =>
        mintStreamToken(server, thread),
      );
      await createRun(server, benchPrompts.echo.slug);
      const baselineKb = await settledRssKb(server.pid);
      context.log(`fan-out: opening ${threadCount} subscribers on ${threadCount} threads`);
      pool = await openSubscriberPool({
        host: server.host,
        port: server.port,
        workers: workersFor(threadCount),
        subscriptions,
      });
      if (pool.failed) throw new Error(`${pool.failed} subscribers failed to open: ${pool.firstError}`);
      const rssKb = await settledRssKb(server.pid);
      const perSubscriberKb = (rssKb - baselineKb) / pool.ready;
      const openPool = pool;
      const allAtOnce = (runThreads: string[]) =>
        measureDelivery(
          server,
          [openPool],
          () =>
            mapConcurrently(runThreads, runThreads.length, (thread) =>
              createRun(server, benchPrompts.fanOut50PerSecond.slug, { thread }),
            ),
          { deliveries: runThreads.length * FAN_OUT_TOKENS, completed: runThreads.length },
        );
      // The first runs of a fresh server: nothing on the run path is compiled yet (the JIT warms up during them).
      context.log(`fan-out: ${activeRuns} runs started at once on a fresh server`);
      const cold = await allAtOnce(threads.slice(0, activeRuns));
      // Steady state: new runs arrive all the time, so about STEADY_STREAMS stream at any moment
      // while others start and finish; latency of the tokens sent once the ramp-up is over.
      const steadySeconds = context.quick ? 4 : 8;
      const steadyThreads = threads.slice(activeRuns, activeRuns + STEADY_STREAMS * steadySeconds);
      context.log(
        `fan-out: ${STEADY_STREAMS} runs/s of ${FAN_OUT_TOKENS} tokens at 50/s for ${steadySeconds} s (~${STEADY_STREAMS} streaming at once)`,
      );
      const steadyStart = wallClockMs() + 500;
      const steady = await measureDelivery(
        server,
        [openPool],
        () => startRunsAtRate(server, steadyThreads, STEADY_STREAMS, steadyStart),
        { deliveries: steadyThreads.length * FAN_OUT_TOKENS, completed: steadyThreads.length },
        { sentFrom: steadyStart + STEADY_RAMP_MS, sentTo: steadyStart + steadySeconds * 1000 },
      );
      // All at once again, warm: every run starts in the same instant and finishes in the same instant.
      const warmFrom = activeRuns + steadyThreads.length;
      context.log(`fan-out: ${activeRuns} runs started at once, warm`);
      const warm = await allAtOnce(threads.slice(warmFrom, warmFrom + activeRuns));
      const steadyP99 = steady.report.latency.percentile(99);
      const warmP99 = warm.report.latency.percentile(99);
      manyThreadsTable = markdownTable(
        [
          "subscribers (threads)",
          "RSS per subscriber",
          "runs",
          "deliveries",
          "latency measured on",
          "p50 ms",
          "p99 ms",
          "server cores",
          "subscriber cores",
          "server thread waited for a core",
        ],
        [
          [
            formatCount(pool.ready),
            formatKb(perSubscriberKb),
            `${STEADY_STREAMS} started per second for ${steadySeconds} s (~${STEADY_STREAMS} streaming at once)`,
            `${formatCount(steady.report.deliveries)} / ${formatCount(steadyThreads.length * FAN_OUT_TOKENS)}`,
            `${formatCount(steady.report.latency.count)} tokens sent after the first ${STEADY_RAMP_MS / 1000} s`,
            formatMs(steady.report.latency.percentile(50)),
            formatMs(steadyP99),
            formatCores(steady.serverCpuSeconds / steady.wallSeconds),
            formatCores(steady.subscriberCores),
            waitedCell(steady),
          ],
          [
            formatCount(pool.ready),
            "",
            `${activeRuns} started in the same instant, first runs of the server`,
            `${formatCount(cold.report.deliveries)} / ${formatCount(activeRuns * FAN_OUT_TOKENS)}`,
            "every token",
            formatMs(cold.report.latency.percentile(50)),
            formatMs(cold.report.latency.percentile(99)),
            formatCores(cold.serverCpuSeconds / cold.wallSeconds),
            formatCores(cold.subscriberCores),
            waitedCell(cold),
          ],
          [
            formatCount(pool.ready),
            "",
            `${activeRuns} started in the same instant, warm`,
            `${formatCount(warm.report.deliveries)} / ${formatCount(activeRuns * FAN_OUT_TOKENS)}`,
            "every token",
            formatMs(warm.report.latency.percentile(50)),
            formatMs(warmP99),
            formatCores(warm.serverCpuSeconds / warm.wallSeconds),
            formatCores(warm.subscriberCores),
            waitedCell(warm),
          ],
        ],
      );
      targets.push(
        {
          target: "10k subscribers on 10k threads, 200 runs at 50 tokens/s: p99 delivery < 50 ms",
          // Met only when every reading is: the steady state, and all runs started in one instant.
          measured: `${formatMs(steadyP99)} ms with ~${STEADY_STREAMS} streaming at once; all ${activeRuns} started in the same instant: ${formatMs(cold.report.latency.percentile(99))} ms as the first runs of the server, ${formatMs(warmP99)} ms warm`,
          met:
            pool.ready >= 10_000 &&
            Math.max(steadyP99, warmP99, cold.report.latency.percentile(99)) < 50 &&
            steady.report.deliveries >= steadyThreads.length * FAN_OUT_TOKENS &&
            cold.report.deliveries >= activeRuns * FAN_OUT_TOKENS &&
            warm.report.deliveries >= activeRuns * FAN_OUT_TOKENS,
        },
        {
          target: "< 12 KB server RSS per subscriber (10k threads)",
          measured: formatKb(perSubscriberKb),
          met: perSubscriberKb < 12,
        },
      );
    } finally {
      await pool?.close();
      await server.dispose(5_000);
    }
  }

  const body = [
    "Subscribers are raw-socket SSE clients (HTTP/1.1, chunked) in separate Bun processes, at most 5,000 per process; each checks `ready`, counts `run.token` events and measures delivery latency from the send time stamped in every token by the fake upstream. " +
      `A fan-out run streams ${FAN_OUT_TOKENS} tokens at 50 tokens/s. RSS per subscriber = (server VmRSS after the subscribers connected − before) / subscribers, from /proc/<pid>/status. ` +
      "CPU cores = CPU seconds / wall seconds over the delivery window (server process; all subscriber processes together). " +
      "Waited for a core = time the server's JavaScript thread was ready to run while other processes held both cores (run_delay, /proc/<pid>/schedstat): every token in flight meanwhile waits too, so a busy neighbour shows up in the p99.",
    "",
    "### One thread",
    "",
    markdownTable(
      [
        "subscribers",
        "RSS per subscriber",
        "deliveries",
        "p50 ms",
        "p99 ms",
        "server cores",
        "subscriber cores",
      ],
      oneThreadRows,
    ),
    "",
    burstLine,
    "",
    "### 10k subscribers on 10k threads",
    "",
    `Every thread has one subscriber. Steady state: ${STEADY_STREAMS} fan-out runs are started per second (an open loop on a fixed schedule, each on its own thread), so about ${STEADY_STREAMS} stream at once while others start and finish, create-run, start and completion costs included; latency is taken from the tokens the upstream sent after the first ${STEADY_RAMP_MS / 1000} s (the ramp-up) until the last run started. ` +
      `All at once: ${ALL_AT_ONCE_RUNS} runs created together (${ALL_AT_ONCE_RUNS} concurrent requests), so they start and finish in the same instant; every token is timed. Measured twice: as the first runs of the fresh server (before the steady state; nothing on the run path compiled yet) and again after it (warm).`,
    "",
    manyThreadsTable,
  ].join("\n");
  return { title: "3. SSE fan-out", body, targets };
}
