/**
 * One server per SQLite file (docs/DEPLOYMENT.md): a second `promptrun serve` on the file of a
 * live server exits 1 with one line naming it; a SIGKILLed server does not block the next start;
 * CLI commands keep working beside a running server. On Postgres a second instance is welcome.
 */

import { afterAll, expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { api, startServer, type TestServer } from "./support/server.ts";

const CLI = resolve(import.meta.dir, "../apps/server/src/cli.ts");
const EXAMPLE_PROMPTS = resolve(import.meta.dir, "../prompts");

let server: TestServer | undefined;
afterAll(async () => {
  await server?.dispose();
});

/** `promptrun serve` on the same database as `running`, on a port of its own. */
async function startSecond(running: TestServer) {
  const child = Bun.spawn(["bun", CLI, "serve"], {
    env: { ...running.env, PORT: "0", PROMPTRUN_SEED_DEMO: "false" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.race([
    Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]),
    Bun.sleep(30_000).then(() => {
      child.kill("SIGKILL");
      throw new Error("the second server neither refused nor exited within 30 s");
    }),
  ]);
  return { stdout, stderr, code };
}

/** What the server printed on stdout up to its ready line (`--json`: `{"url":…}`). */
async function readUntilReady(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (!text.includes('"url"') && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

const refusalLine = (databaseFile: string, pid: number) =>
  new RegExp(
    `^error: DATABASE_URL: another Promptrun server is using ${databaseFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(pid ${pid}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); use Postgres for several instances\\n$`,
  );

test("a second server on a live SQLite file is refused (on Postgres it starts); a SIGKILLed one blocks nothing", async () => {
  server = await startServer();
  const first = server;

  if (first.dialect === "postgres") {
    // Leased runs: several instances may share one Postgres database, so the second one starts.
    const child = Bun.spawn(["bun", CLI, "serve", "--json"], {
      env: { ...first.env, PORT: "0", PROMPTRUN_SEED_DEMO: "false" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      expect(await readUntilReady(child.stdout)).toContain('"url"');
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
    return;
  }

  const databaseFile = join(first.dataDir, "promptrun.db");
  const refused = await startSecond(first);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(refusalLine(databaseFile, first.process.pid));
  expect(refused.stdout).toBe("");
  // The first server is untouched by the attempt.
  expect((await api(first, "/health")).status).toBe(200);

  await first.kill();
  server = await first.restart();
  expect((await api(server, "/health")).status).toBe(200);

  // The restarted server holds the file in turn.
  const refusedAgain = await startSecond(server);
  expect(refusedAgain.code).toBe(1);
  expect(refusedAgain.stderr).toMatch(refusalLine(databaseFile, server.process.pid));
}, 120_000);

test("CLI commands work on the database of a running server, and the server sees what they wrote", async () => {
  server ??= await startServer();
  const running = server;
  expect((await running.cli<{ migrated: boolean }>("migrate")).json.migrated).toBe(true);

  const created = await running.cli<{ tenant: { id: string }; apiKey: string }>(
    "tenants",
    "create",
    "beside",
  );
  expect(created.code).toBe(0);
  const tenantId = created.json.tenant.id;
  const listed = await running.cli<Array<{ id: string }>>("tenants", "list");
  expect(listed.json.map((tenant) => tenant.id)).toContain(tenantId);

  const key = await running.cli<{ apiKey: string }>("keys", "create", tenantId);
  expect(key.code).toBe(0);
  const pushed = await running.cli<Array<{ slug: string }>>(
    "prompts",
    "push",
    EXAMPLE_PROMPTS,
    "--tenant",
    tenantId,
  );
  expect(pushed.code).toBe(0);
  expect(pushed.json.map((prompt) => prompt.slug).sort()).toEqual([
    "answer-ticket",
    "ask-docs",
    "chat",
    "classify-ticket",
    "extract-contact",
    "greet",
    "order-status",
    "summarize",
  ]);

  const envs = await running.cli<{ keys: string[] }>("envs", "set", tenantId, "staging", "REGION=eu");
  expect(envs.json.keys).toEqual(["REGION"]);
  const webhook = await running.cli<{ id: string }>(
    "webhooks",
    "add",
    tenantId,
    "staging",
    "http://127.0.0.1:9/hook",
  );
  expect(webhook.code).toBe(0);
  expect(typeof webhook.json.id).toBe("string");

  if (running.dialect === "sqlite") {
    const copy = await running.cli<{ copied: Record<string, number> }>(
      "db",
      "copy",
      "--from",
      running.env.DATABASE_URL ?? "",
      "--to",
      `file:${join(running.dataDir, "copy.db")}`,
    );
    expect(copy.code).toBe(0);
    expect(copy.json.copied.tenants).toBeGreaterThanOrEqual(2);
  }

  // The key the CLI created authenticates against the running server: an unknown run is a 404,
  // not a 401.
  const lookup = await api(
    { url: running.url, apiKey: key.json.apiKey },
    `/api/v1/promptruns/${crypto.randomUUID()}`,
  );
  expect(lookup.status).toBe(404);
  expect((await api(running, "/health")).status).toBe(200);
}, 120_000);
