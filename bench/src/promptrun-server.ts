/**
 * The server under test: `promptrun serve --json` as a child process on 127.0.0.1, port 0, on a
 * fresh SQLite file, with the limits a benchmark needs raised through its public variables.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ChildChannel, spawnChild } from "./child-channel.ts";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
const CLI = join(REPO_ROOT, "apps/server/src/cli.ts");

export interface PromptrunServer {
  url: string;
  host: string;
  port: number;
  apiKey: string;
  tenantId: string;
  pid: number;
  dataDir: string;
  /** `promptrun <args> --json` on the same database. */
  cli<T>(...args: string[]): Promise<T>;
  /** Pushes every prompt file of a directory to the demo tenant. */
  pushPrompts(directory: string): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after graceMs; keeps the data directory (see `reuse`). */
  stop(graceMs?: number): Promise<void>;
  /** stop(), then deletes the data directory. */
  dispose(graceMs?: number): Promise<void>;
  /** What the server printed (last ~20 kB), for error messages. */
  output(): string;
}

export interface PromptrunServerOptions {
  env?: Record<string, string>;
  /** Extra flags for the bun runtime (e.g. `--cpu-prof-md`). */
  bunFlags?: string[];
  fileLimit?: number;
  /** Start on the database of a stopped server (no demo seed then: its key and tenant carry over). */
  reuse?: Pick<PromptrunServer, "dataDir" | "apiKey" | "tenantId">;
  /** How long to wait for the ready line (the server prints it once its engine has loaded the pending runs); 60 s unless told. */
  readyTimeoutMs?: number;
}

/** What every benchmark wants: no rate limit in the way, enough execution slots, quiet logs. */
export const BENCH_SERVER_ENV: Record<string, string> = {
  HOST: "127.0.0.1",
  PORT: "0",
  LOG_LEVEL: "warn",
  PROMPTRUN_SEED_DEMO: "true",
  PROMPTRUN_RATE_LIMIT: "1000000/s,1000000",
  PROMPTRUN_ALLOW_PRIVATE_URLS: "true",
  // One thread with 10k subscribers, and queues deeper than the default cap.
  PROMPTRUN_MAX_STREAMS_PER_THREAD: "100000",
  PROMPTRUN_MAX_PENDING_RUNS: "1000000",
  PROMPTRUN_SECRET: "bench-secret-bench-secret-bench-secret-0123456789",
};

export async function startPromptrunServer(options: PromptrunServerOptions = {}): Promise<PromptrunServer> {
  const dataDir = options.reuse?.dataDir ?? mkdtempSync(join(tmpdir(), "promptrun-bench-"));
  const env: Record<string, string> = {
    ...BENCH_SERVER_ENV,
    DATABASE_URL: `file:${join(dataDir, "promptrun.db")}`,
    ...options.env,
  };
  const child: ChildChannel = spawnChild(["bun", ...(options.bunFlags ?? []), CLI, "serve", "--json"], {
    env,
    cwd: REPO_ROOT,
    fileLimit: options.fileLimit ?? 65_536,
  });
  let ready: { url: string; demo: { apiKey: string; tenantId: string } | null };
  try {
    // serve --json prints {"url","demo"} without a `type`: the channel keeps it as output.
    ready = await waitForReadyLine(child, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await child.stop(2_000);
    if (!options.reuse) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const demo = options.reuse ?? ready.demo;
  if (!demo) throw new Error("the server seeded no demo tenant");
  const url = new URL(ready.url);
  const cliEnv = { ...env };
  const server: PromptrunServer = {
    url: ready.url,
    host: url.hostname,
    port: Number(url.port),
    apiKey: demo.apiKey,
    tenantId: demo.tenantId,
    pid: child.pid,
    dataDir,
    async cli<T>(...args: string[]) {
      const run = Bun.spawn(["bun", CLI, ...args, "--json"], {
        env: { ...process.env, ...cliEnv },
        cwd: REPO_ROOT,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([
        new Response(run.stdout).text(),
        new Response(run.stderr).text(),
        run.exited,
      ]);
      if (code !== 0) throw new Error(`promptrun ${args.join(" ")} exited ${code}: ${stdout}${stderr}`);
      return JSON.parse(stdout) as T;
    },
    async pushPrompts(directory) {
      await server.cli("prompts", "push", directory, "--tenant", server.tenantId);
    },
    async stop(graceMs = 15_000) {
      await child.stop(graceMs);
    },
    async dispose(graceMs = 15_000) {
      await child.stop(graceMs);
      rmSync(dataDir, { recursive: true, force: true });
    },
    output: () => child.output(),
  };
  return server;
}

async function waitForReadyLine(
  child: ChildChannel,
  timeoutMs: number,
): Promise<{ url: string; demo: { apiKey: string; tenantId: string } | null }> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    for (const line of child.output().split("\n")) {
      if (line.startsWith("{") && line.includes('"url"') && !line.includes('"level"'))
        return JSON.parse(line);
    }
    if (exited)
      throw new Error(`promptrun serve exited before it was ready:\n${child.output().slice(-4000)}`);
    await Bun.sleep(50);
  }
  throw new Error(`promptrun serve not ready after ${timeoutMs} ms:\n${child.output().slice(-4000)}`);
}
