/**
 * Soak test (`bun run soak [--minutes N] [--workers N]`), not part of `bun test`: starts the real
 * server on 127.0.0.1 (port 0, temporary SQLite file) and holds a steady, closed-loop mix of
 * create / read / stream traffic for N minutes (default 3). Samples the server's RSS from
 * /proc/<pid>/status and prints a summary. Exits 1 when any request failed or RSS grew more
 * than 30 % between the first sample after warm-up and the last.
 */
import { parseArgs } from "node:util";
import { residentKb } from "../hardening/support.ts";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { SseConnection } from "../support/sse.ts";

/** Ends the process with a code (named so it reads as what it is). */
const exitProcess: (code?: number) => never = process.exit.bind(process);

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    minutes: { type: "string", default: "3" },
    workers: { type: "string", default: "12" },
  },
});
const minutes = Number(values.minutes);
const workers = Number(values.workers);
if (!(minutes > 0) || !(workers > 0)) {
  process.stderr.write("usage: bun run soak [--minutes 3] [--workers 12]\n");
  exitProcess(2);
}

const durationMs = minutes * 60_000;
/** RSS before this point is start-up and JIT warm-up, not growth. */
const warmUpMs = Math.min(20_000, durationMs / 6);
const MAX_GROWTH = 0.3;

interface Stats {
  operations: Record<string, number>;
  errors: string[];
  createLatenciesMs: number[];
  rss: Array<{ atSeconds: number; kb: number }>;
}
const stats: Stats = { operations: {}, errors: [], createLatenciesMs: [], rss: [] };
const count = (operation: string) => {
  stats.operations[operation] = (stats.operations[operation] ?? 0) + 1;
};
let errorCount = 0;
const fail = (what: string) => {
  // The first few messages are kept for the report; all are counted.
  if (stats.errors.length < 50) stats.errors.push(what);
  errorCount += 1;
};

const expectStatus = async (response: Response, status: number, what: string): Promise<boolean> => {
  if (response.status === status) return true;
  fail(`${what}: ${response.status} ${(await response.text()).slice(0, 200)}`);
  return false;
};

async function createRun(server: TestServer, body: Record<string, unknown>, slug = "greet") {
  const began = performance.now();
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  stats.createLatenciesMs.push(performance.now() - began);
  count("create");
  if (!(await expectStatus(response, 202, "create"))) return null;
  return (await response.json()) as { id: string; thread: string };
}

/** create → poll until done → read once more. */
async function createAndRead(server: TestServer, index: number) {
  const created = await createRun(server, { inputs: { name: `Soak ${index}` }, metadata: { soak: "yes" } });
  if (!created) return;
  const run = await waitForRun(server, created.id, 60_000);
  count("read");
  if (run.status !== "completed") fail(`run ${created.id} ended ${String(run.status)}: ${String(run.error)}`);
  const again = await api(server, `/api/v1/promptruns/${created.id}`);
  count("read");
  await expectStatus(again, 200, "read");
  await again.body?.cancel();
}

/** token → subscribe → run on the thread → wait for run.completed on the stream → close. */
async function streamRun(server: TestServer, index: number) {
  const thread = crypto.randomUUID();
  const minted = await api(server, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
  count("stream-token");
  if (!(await expectStatus(minted, 200, "stream-token"))) return;
  const { token, url } = (await minted.json()) as { token: string; url: string };
  const connection = await SseConnection.open(url, { token });
  count("stream");
  try {
    if (connection.status !== 200) return fail(`stream: ${connection.status}`);
    await connection.waitFor((event) => event.event === "ready");
    const created = await createRun(
      server,
      { inputs: { message: `streamed message ${index} of the soak` }, thread },
      "chat",
    );
    if (!created) return;
    const ended = await connection.waitFor(
      (event) =>
        (event.event === "run.completed" || event.event === "run.failed") && event.data.runId === created.id,
      60_000,
    );
    if (ended.event !== "run.completed") fail(`streamed run ${created.id} failed`);
  } finally {
    connection.close();
  }
}

async function worker(server: TestServer, workerIndex: number, deadline: number) {
  for (let iteration = 0; Date.now() < deadline; iteration++) {
    try {
      // Mostly create/read, one in four streamed: a steady mix with every path exercised.
      if (iteration % 4 === 3) await streamRun(server, iteration);
      else await createAndRead(server, iteration);
    } catch (error) {
      fail(`worker ${workerIndex}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

const percentile = (sorted: number[], fraction: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;

const server = await startServer({
  env: {
    // The soak measures stability, not the limits: keep them out of the way.
    PROMPTRUN_RATE_LIMIT: "100000/s,100000",
    PROMPTRUN_CONCURRENCY: "64",
    PROMPTRUN_TENANT_CONCURRENCY: "64",
  },
});
const pid = server.process.pid;
const startedAt = Date.now();
const deadline = startedAt + durationMs;
process.stdout.write(
  `soak: ${minutes} min, ${workers} workers, server ${server.url} (pid ${pid}); RSS every 5 s after ${Math.round(warmUpMs / 1000)} s warm-up\n`,
);
const sampler = setInterval(() => {
  const elapsed = Date.now() - startedAt;
  if (elapsed >= warmUpMs) stats.rss.push({ atSeconds: Math.round(elapsed / 1000), kb: residentKb(pid) });
}, 5_000);

try {
  await Promise.all(Array.from({ length: workers }, (_, index) => worker(server, index, deadline)));
} finally {
  clearInterval(sampler);
  stats.rss.push({ atSeconds: Math.round((Date.now() - startedAt) / 1000), kb: residentKb(pid) });
  await server.dispose();
}

const elapsedSeconds = (Date.now() - startedAt) / 1000;
const sorted = [...stats.createLatenciesMs].sort((a, b) => a - b);
const first = stats.rss[0]!;
const middle = stats.rss[Math.floor(stats.rss.length / 2)]!;
const last = stats.rss[stats.rss.length - 1]!;
const growth = (last.kb - first.kb) / first.kb;
const total = Object.values(stats.operations).reduce((sum, value) => sum + value, 0);
const summary = {
  minutes,
  workers,
  elapsedSeconds: Math.round(elapsedSeconds),
  operations: stats.operations,
  operationsPerSecond: Math.round(total / elapsedSeconds),
  createLatencyMs: {
    p50: Number(percentile(sorted, 0.5).toFixed(1)),
    p99: Number(percentile(sorted, 0.99).toFixed(1)),
    max: Number((sorted[sorted.length - 1] ?? 0).toFixed(1)),
  },
  errors: errorCount,
  rssMb: {
    start: { atSeconds: first.atSeconds, mb: Number((first.kb / 1024).toFixed(1)) },
    middle: { atSeconds: middle.atSeconds, mb: Number((middle.kb / 1024).toFixed(1)) },
    end: { atSeconds: last.atSeconds, mb: Number((last.kb / 1024).toFixed(1)) },
    peak: Number((Math.max(...stats.rss.map((sample) => sample.kb)) / 1024).toFixed(1)),
  },
  rssGrowthPercent: Number((growth * 100).toFixed(1)),
};
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
if (stats.errors.length > 0)
  process.stdout.write(`first errors:\n  ${stats.errors.slice(0, 10).join("\n  ")}\n`);
const passed = errorCount === 0 && growth <= MAX_GROWTH;
process.stdout.write(
  passed
    ? "soak: PASS (errors = 0, RSS growth within 30 %)\n"
    : `soak: FAIL (${errorCount} errors, RSS growth ${(growth * 100).toFixed(1)} %)\n`,
);
exitProcess(passed ? 0 : 1);
