import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeBenchPrompts } from "../bench-prompts.ts";
import { engineStats, startBenchServer } from "../bench-server.ts";
import type { PromptrunServer } from "../promptrun-server.ts";
import { startStampedUpstream } from "../stamped-upstream.ts";
import { measureSetupPhases, renderSetupPhases } from "./stream-setup-phases.ts";

// Against the real server (`promptrun serve` as a child process, real SQLite, real SSE).
const upstream = startStampedUpstream();
const scratch = mkdtempSync(join(tmpdir(), "setup-phases-test-"));
let server: PromptrunServer;

beforeAll(async () => {
  server = await startBenchServer({
    promptsDir: await writeBenchPrompts(scratch),
    upstreamUrl: upstream.url,
  });
}, 60_000);

afterAll(async () => {
  await server?.dispose(5_000);
  await upstream.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("each phase of a stream's set-up is run for real and costs the server CPU; every run created has ended", async () => {
  const setup = await measureSetupPhases(server, 24, 6);
  expect(setup.phases.map((phase) => phase.name)).toEqual([
    "mint a stream token (POST /api/v1/threads/{thread}/stream-token)",
    "open the SSE stream until `ready`, then close it",
    "create a bench-stream-2 run on a new thread, and its execution",
  ]);
  for (const phase of setup.phases) {
    expect(Number.isFinite(phase.cpuUs)).toBe(true);
    expect(phase.cpuUs).toBeGreaterThanOrEqual(0);
  }
  // Measured until the engine was idle: nothing the create phase started is still running.
  expect(await engineStats(server)).toEqual({ queued: 0, executing: 0 });

  const table = renderSetupPhases(
    {
      ...setup,
      phases: [
        { name: "a", cpuUs: 100 },
        { name: "b", cpuUs: 250.4 },
      ],
    },
    0.5,
  );
  expect(table).toContain("| sum of the phases | 350 |");
  expect(table).toContain("| the whole 2-token stream through Promptrun (the CPU table above) | 500 |");
}, 60_000);
