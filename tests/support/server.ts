/**
 * Starts the real server (`promptrun serve`) as a child process on 127.0.0.1, port 0, on a data
 * set of its own (a SQLite file, or with PROMPTRUN_E2E_DATABASE=postgres a fresh Postgres database
 * and Redis prefix: see ./data-set.ts), and runs CLI commands against the same database.
 */
import { resolve } from "node:path";
import { createDataSet, type DataSet, type E2eDialect, type SqlParameter } from "./data-set.ts";

const CLI = resolve(import.meta.dir, "../../apps/server/src/cli.ts");

export interface TestServer {
  url: string;
  apiKey: string;
  tenantId: string;
  dataDir: string;
  /** The storage this server runs on (PROMPTRUN_E2E_DATABASE). */
  dialect: E2eDialect;
  env: Record<string, string>;
  process: ReturnType<typeof Bun.spawn>;
  /** Captured stdout+stderr, for debugging failures. */
  logs(): string;
  /** Runs `promptrun <args> --json` against the same database; parses its one JSON document. */
  cli<T = unknown>(...args: string[]): Promise<{ code: number; json: T; stderr: string }>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL, no cleanup (crash tests). */
  kill(): Promise<void>;
  /** Start again on the same database (and the same port unless told otherwise). */
  restart(extraEnv?: Record<string, string>): Promise<TestServer>;
  /**
   * Queries the server's database directly, in either dialect (`?` placeholders; SQLite
   * read-only unless `write`). Postgres returns its own types: Date, parsed JSON, bigint counts as
   * strings (wrap counts in Number()).
   */
  sql<T = Record<string, unknown>>(
    query: string,
    params?: SqlParameter[],
    options?: { write?: boolean },
  ): Promise<T[]>;
  /** Stop and delete the data set (directory; on Postgres the database and Redis keys too). */
  dispose(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  dataDir?: string;
  seedDemo?: boolean;
}

async function readFirstJsonLine(
  stream: ReadableStream<Uint8Array>,
  onText: (text: string) => void,
): Promise<unknown> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("server closed its output before it was ready");
    const text = decoder.decode(value, { stream: true });
    onText(text);
    buffer += text;
    for (const line of buffer.split("\n")) {
      if (line.startsWith("{") && line.includes('"url"') && !line.includes('"level"')) {
        // Keep draining stdout so the child never blocks on a full pipe.
        (async () => {
          for (;;) {
            const next = await reader.read().catch(() => ({ done: true, value: undefined }));
            if (next.done) return;
            onText(decoder.decode(next.value, { stream: true }));
          }
        })();
        return JSON.parse(line);
      }
    }
  }
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataSet = await createDataSet(options.dataDir);
  try {
    return await launch(dataSet, options);
  } catch (error) {
    await dataSet.dispose().catch(() => {});
    throw error;
  }
}

/** Starts a server on an existing data set (first start and restarts). */
async function launch(dataSet: DataSet, options: StartOptions): Promise<TestServer> {
  const dataDir = dataSet.dataDir;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    PORT: "0",
    HOST: "127.0.0.1",
    ...dataSet.env,
    LOG_LEVEL: "warn",
    PROMPTRUN_SEED_DEMO: options.seedDemo === false ? "false" : "true",
    PROMPTRUN_ALLOW_PRIVATE_URLS: "true",
    ...options.env,
  };
  let output = "";
  const child = Bun.spawn(["bun", CLI, "serve", "--json"], { env, stdout: "pipe", stderr: "pipe" });
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) output += decoder.decode(chunk, { stream: true });
  })();
  const ready = (await Promise.race([
    readFirstJsonLine(child.stdout, (text) => {
      output += text;
    }).catch(async (error: unknown) => {
      // Give stderr a moment to arrive, so the failure shows what the server said.
      await Promise.race([child.exited, Bun.sleep(1_000)]);
      throw new Error(
        `${error instanceof Error ? error.message : String(error)} (exit ${child.exitCode}):\n${output}`,
      );
    }),
    child.exited.then((code) => {
      throw new Error(`server exited with ${code} before it was ready:\n${output}`);
    }),
    Bun.sleep(30_000).then(() => {
      throw new Error(`server not ready after 30 s:\n${output}`);
    }),
  ])) as { url: string; demo: { apiKey: string; tenantId: string } | null };

  const server: TestServer = {
    url: ready.url,
    apiKey: ready.demo?.apiKey ?? "",
    tenantId: ready.demo?.tenantId ?? "",
    dataDir,
    dialect: dataSet.dialect,
    env,
    process: child,
    logs: () => output,
    async cli<T>(...args: string[]) {
      const run = Bun.spawn(["bun", CLI, ...args, "--json"], { env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([
        new Response(run.stdout).text(),
        new Response(run.stderr).text(),
        run.exited,
      ]);
      let json: T;
      try {
        json = JSON.parse(stdout) as T;
      } catch {
        throw new Error(`CLI ${args.join(" ")} printed no JSON (exit ${code}): ${stdout}\n${stderr}`);
      }
      return { code, json, stderr };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await Promise.race([child.exited, Bun.sleep(20_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await child.exited;
    },
    async kill() {
      child.kill("SIGKILL");
      await child.exited;
    },
    async restart(extraEnv = {}) {
      await server.stop();
      const port = new URL(server.url).port;
      const next = await launch(dataSet, {
        env: { ...options.env, PORT: port, ...extraEnv },
        seedDemo: false,
      });
      return Object.assign(next, { apiKey: server.apiKey, tenantId: server.tenantId });
    },
    sql<T>(query: string, params?: SqlParameter[], sqlOptions?: { write?: boolean }) {
      return dataSet.sql<T>(query, params, sqlOptions);
    },
    async dispose() {
      await server.stop();
      await dataSet.dispose();
    },
  };
  return server;
}

/** fetch with the API key. */
export function api(
  server: Pick<TestServer, "url" | "apiKey">,
  path: string,
  init: RequestInit & { json?: unknown; key?: string | null } = {},
) {
  const headers = new Headers(init.headers);
  const key = init.key === undefined ? server.apiKey : init.key;
  if (key !== null) headers.set("authorization", `Bearer ${key}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  return fetch(`${server.url}${path}`, { ...init, headers, body });
}

/** Polls a run until it is no longer pending. */
export async function waitForRun(
  server: Pick<TestServer, "url" | "apiKey">,
  id: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api(server, `/api/v1/promptruns/${id}`);
    const run = (await response.json()) as Record<string, unknown>;
    if (run.status !== "pending") return run;
    if (Date.now() > deadline) throw new Error(`run ${id} still pending after ${timeoutMs} ms`);
    await Bun.sleep(25);
  }
}
