/**
 * Helpers shared by the hardening suites: tenants and prompts through the real CLI, row counts
 * in the server's database (either dialect), the server's resident memory, Prometheus samples
 * and raw sockets.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestServer } from "../support/server.ts";

export interface Tenant {
  id: string;
  apiKey: string;
}

/** A tenant and its first API key, created with `promptrun tenants create`. */
export async function createTenant(server: TestServer, name: string): Promise<Tenant> {
  const created = await server.cli<{ tenant: { id: string }; apiKey: string }>("tenants", "create", name);
  if (created.code !== 0) throw new Error(`tenants create failed: ${created.stderr}`);
  return { id: created.json.tenant.id, apiKey: created.json.apiKey };
}

/** Pushes prompt definitions (as JSON files) for a tenant with `promptrun prompts push`. */
export async function pushPrompts(server: TestServer, tenantId: string, prompts: object[]): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), "promptrun-prompts-"));
  try {
    prompts.forEach((prompt, index) => {
      writeFileSync(join(directory, `prompt-${index}.json`), JSON.stringify(prompt));
    });
    const pushed = await server.cli("prompts", "push", directory, "--tenant", tenantId);
    if (pushed.code !== 0) throw new Error(`prompts push failed: ${pushed.stderr}`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** A prompt on the built-in development model that echoes `{{text}}` word by word. */
export const echoPrompt = (slug: string, delayMs = 0) => ({
  slug,
  model: "dev:echo",
  params: { delayMs },
  inputs: { text: { type: "string" } },
  messages: [{ role: "user", content: "{{text}}" }],
});

/** SIGKILL and delete the data set: for servers with long runs in flight (no 10 s grace). */
export async function discard(server: TestServer): Promise<void> {
  await server.kill();
  await server.dispose();
}

/** The SQLite file of a server on SQLite (for the tests that are about the file itself). */
export const databasePathOf = (server: TestServer): string => {
  if (server.dialect !== "sqlite") throw new Error("databasePathOf: the server is not on SQLite");
  return server.env.DATABASE_URL!.slice("file:".length);
};

/** The `n` of a `select count(*) as n …` query (Postgres returns bigint counts as text). */
export async function countRows(server: TestServer, sql: string, ...params: string[]): Promise<number> {
  const [row] = await server.sql<{ n: number | string }>(sql, params);
  return Number(row?.n);
}

/** Resident set size of a process in KiB, from /proc/<pid>/status. */
export function residentKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]);
}

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition into samples (comments skipped). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `labels`. */
export function metricSum(
  samples: MetricSample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** `token`: the server's PROMPTRUN_METRICS_TOKEN, when it has one. */
export async function scrapeMetrics(server: TestServer, token?: string): Promise<MetricSample[]> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const response = await fetch(`${server.url}/metrics`, { headers });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return parseMetrics(await response.text());
}

export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(25);
  }
}

export interface RawSocket {
  write(text: string | Uint8Array): void;
  /** Everything received so far, as text. */
  received(): string;
  /** Resolves when the server closes the connection (or after it was closed by us). */
  closed: Promise<void>;
  isClosed(): boolean;
  end(): void;
}

/** A plain TCP connection to the server, for requests no HTTP client would send. */
export async function rawConnect(server: TestServer): Promise<RawSocket> {
  const { hostname, port } = new URL(server.url);
  let text = "";
  let isClosed = false;
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = () => {
      isClosed = true;
      resolve();
    };
  });
  const decoder = new TextDecoder();
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, data) {
        text += decoder.decode(data, { stream: true });
      },
      close() {
        markClosed();
      },
      error() {
        markClosed();
      },
      end() {
        markClosed();
      },
    },
  });
  return {
    write: (chunk) => {
      if (!isClosed) socket.write(chunk);
    },
    received: () => text,
    closed,
    isClosed: () => isClosed,
    end: () => socket.end(),
  };
}
