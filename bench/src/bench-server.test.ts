import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchPrompts, writeBenchPrompts } from "./bench-prompts.ts";
import {
  createRun,
  engineStats,
  mapConcurrently,
  mintStreamToken,
  openGate,
  parkExecutionSlots,
  startBenchServer,
} from "./bench-server.ts";
import type { PromptrunServer } from "./promptrun-server.ts";
import { openSubscriberPool } from "./sse-subscriber-pool.ts";
import { startStampedUpstream } from "./stamped-upstream.ts";

// The harness against the real server: `promptrun serve` as a child process, real SQLite, real SSE.
const upstream = startStampedUpstream();
const scratch = mkdtempSync(join(tmpdir(), "bench-server-test-"));
let server: PromptrunServer;

beforeAll(async () => {
  server = await startBenchServer({
    promptsDir: await writeBenchPrompts(scratch),
    upstreamUrl: upstream.url,
    env: { PROMPTRUN_CONCURRENCY: "4", PROMPTRUN_TENANT_CONCURRENCY: "4" },
  });
}, 60_000);

afterAll(async () => {
  upstream.openGate();
  await server?.dispose(5_000);
  await upstream.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("subscribers on a thread receive every stamped token of a run, with latency", async () => {
  const thread = crypto.randomUUID();
  const subscription = await mintStreamToken(server, thread);
  expect(subscription.path).toBe(`/stream/${thread}`);
  const pool = await openSubscriberPool({
    host: server.host,
    port: server.port,
    workers: 1,
    subscriptions: [subscription, subscription, subscription],
  });
  try {
    expect(pool.ready).toBe(3);
    await createRun(server, benchPrompts.burst.slug, { thread });
    const report = await pool.waitFor({ deliveries: 300, completed: 3 }, 30_000);
    expect(report.deliveries).toBe(300);
    expect(report.completed).toBe(3);
    expect(report.latency.count).toBe(300);
    expect(report.latency.max).toBeLessThan(30_000);
  } finally {
    await pool.close();
  }
}, 60_000);

test("parked slots keep later runs queued until the gate opens", async () => {
  await parkExecutionSlots(server, upstream.url, benchPrompts.gate.slug, 4);
  await mapConcurrently([1, 2, 3], 3, () => createRun(server, benchPrompts.echo.slug));
  expect(await engineStats(server)).toEqual({ queued: 3, executing: 4 });
  await openGate(upstream.url);
  for (let polls = 0; polls < 200; polls++) {
    const stats = await engineStats(server);
    if (stats.queued === 0 && stats.executing === 0) break;
    await Bun.sleep(50);
  }
  expect(await engineStats(server)).toEqual({ queued: 0, executing: 0 });
}, 60_000);
