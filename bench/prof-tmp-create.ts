import { join } from "node:path";
import { benchPrompts, writeBenchPrompts } from "./src/bench-prompts.ts";
import { parkExecutionSlots, startBenchServer } from "./src/bench-server.ts";
import { spawnChild } from "./src/child-channel.ts";
import { loadTest } from "./src/load-test.ts";
const scratch = "/tmp/prof";
const upstream = spawnChild(["bun", join(import.meta.dir, "src/processes/stamped-upstream.ts")], { fileLimit: 65536 });
const { url } = await upstream.next<{ type: string; url: string }>("ready", 30_000);
(await import("node:fs")).mkdirSync("/tmp/prof/out", { recursive: true });
const server = await startBenchServer({ promptsDir: await writeBenchPrompts(scratch), upstreamUrl: url, bunFlags: ["--cpu-prof-md", "--cpu-prof-dir=/tmp/prof/out"] });
await parkExecutionSlots(server, url, benchPrompts.gate.slug, 8);
const result = await loadTest({ url: `${server.url}/api/v1/prompts/${benchPrompts.echo.slug}/latest/runs`, connections: 100, durationSeconds: 8, scratchDir: scratch,
  request: { method: "POST", body: JSON.stringify({ inputs: { message: "hello bench" } }), headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.apiKey}` } } });
console.log(result.requestsPerSecond, result.p99Ms);
await server.dispose(20_000);
await upstream.stop(2000);
process.exit(0);
