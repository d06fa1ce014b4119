/**
 * Times filtered run lists and usage at a million runs (docs/BENCHMARKS.md Findings): fills a
 * SQLite file and a Postgres database with `--runs` runs (default 1,000,000) in 4 tenants, then
 * times first pages of filtered lists, a deep page and a year's usage of one tenant through the
 * stores (median of 5, warm). Not a test: figures vary by machine.
 *
 *   bun scripts/measure-run-lists.ts [--runs=1000000] [--only=sqlite|postgres]
 *     [--postgres=postgres://postgres@127.0.0.1:5432/postgres]  (creates and drops a scratch database)
 */
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunListFilter, Store, UsageQuery } from "@promptrun/core";
import { addTenant, definitionOf, push } from "@promptrun/core/testing";
import postgres from "postgres";
import { openPostgresStore } from "../src/postgres/open.ts";
import { encodeCursor } from "../src/shared/cursor.ts";
import { openSqliteStore } from "../src/sqlite/open.ts";

const argument = (name: string, fallback: string) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const TOTAL = Number(argument("runs", "1000000"));
const ONLY = argument("only", "");
const ADMIN_URL = argument("postgres", "postgres://postgres@127.0.0.1:5432/postgres");
const TENANTS = 4;
const SLUGS = 20;
const THREADS_PER_TENANT = 20_000;
const START = Date.UTC(2025, 11, 1);
const DAY = 86_400_000;

interface Fixture {
  tenants: string[];
  versions: Map<string, { promptId: string; id: string }>;
}

/** 4 tenants with 20 prompts each (the first five on an OpenAI model), through the store. */
async function seed(store: Store): Promise<Fixture> {
  const tenants: string[] = [];
  const versions = new Map<string, { promptId: string; id: string }>();
  for (let t = 0; t < TENANTS; t++) {
    const tenant = await addTenant(store, `tenant-${t}`);
    tenants.push(tenant.id);
    for (let s = 0; s < SLUGS; s++) {
      const model = s < 5 ? "openai:gpt-4o-mini" : "dev:echo";
      const { version } = await push(store, tenant.id, `p${s}`, `text ${s}`, [], 0, {
        ...definitionOf(`text ${s}`),
        model,
      });
      versions.set(`${tenant.id}/${s}`, { promptId: version.promptId, id: version.id });
    }
  }
  return { tenants, versions };
}

/** The i-th run's columns: deterministic spread over tenants, prompts, threads, a year, statuses. */
function runRow(i: number, fixture: Fixture) {
  const tenant = fixture.tenants[i % TENANTS]!;
  const slug = Math.floor(i / TENANTS) % SLUGS;
  const version = fixture.versions.get(`${tenant}/${slug}`)!;
  const roll = (i * 7919) % 1000;
  const status = roll < 20 ? "failed" : roll < 30 ? "pending" : "completed";
  const createdAt = START + Math.floor((i / TOTAL) * 365 * DAY);
  const ended = status !== "pending";
  const cost = ended
    ? JSON.stringify({
        success: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0.001 },
        retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
        total: 0.001,
      })
    : null;
  return {
    id: Bun.randomUUIDv7("hex", createdAt),
    tenant,
    thread: `00000000-0000-7000-8000-${String(Math.floor(i / TENANTS) % THREADS_PER_TENANT).padStart(12, "0")}`,
    promptId: version.promptId,
    versionId: version.id,
    slug: `p${slug}`,
    environment: roll % 100 === 7 ? "rare" : roll % 10 === 3 ? "staging" : "production",
    status,
    metadata: JSON.stringify({ customer: `c${i % 1000}`, tags: [i % 2 === 0 ? "even" : "odd"] }),
    createdAt,
    startedAt: status === "pending" && i % 2 === 0 ? null : createdAt + 10,
    finishedAt: ended ? createdAt + 900 : null,
    tokenUsage: ended ? '{"input":12,"inputCached":0,"output":30,"reasoning":0,"total":42}' : null,
    cost,
  };
}

const COLUMNS =
  "id, tenant_id, thread_id, channel, prompt_id, prompt_version_id, prompt_slug, prompt_version, priority, environment, status, inputs, metadata, created_at, started_at, finished_at, output, token_usage, cost, attempts";

function fillSqlite(raw: Database, fixture: Fixture): void {
  const thread = raw.prepare("INSERT OR IGNORE INTO threads (tenant_id, id, created_at) VALUES (?, ?, ?)");
  const insert = raw.prepare(
    `INSERT INTO runs (${COLUMNS}) VALUES (?, ?, ?, 'default', ?, ?, ?, 1, 'normal', ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?, 1)`,
  );
  const batch = raw.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const r = runRow(i, fixture);
      thread.run(r.tenant, r.thread, START);
      insert.run(
        r.id,
        r.tenant,
        r.thread,
        r.promptId,
        r.versionId,
        r.slug,
        r.environment,
        r.status,
        r.metadata,
        r.createdAt,
        r.startedAt,
        r.finishedAt,
        r.status === "completed" ? "ok" : null,
        r.tokenUsage,
        r.cost,
      );
    }
  });
  for (let from = 0; from < TOTAL; from += 50_000) batch(from, Math.min(TOTAL, from + 50_000));
  raw.exec("ANALYZE");
}

async function fillPostgres(sql: postgres.Sql, fixture: Fixture): Promise<void> {
  for (let from = 0; from < TOTAL; from += 20_000) {
    const rows = [];
    for (let i = from; i < Math.min(TOTAL, from + 20_000); i++) rows.push(runRow(i, fixture));
    await sql`INSERT INTO threads (tenant_id, id, created_at)
      SELECT DISTINCT t, th, to_timestamp(${START / 1000}) FROM unnest(${rows.map((r) => r.tenant)}::text[], ${rows.map((r) => r.thread)}::text[]) AS x(t, th)
      ON CONFLICT DO NOTHING`;
    await sql.unsafe(
      `INSERT INTO runs (${COLUMNS}) SELECT id, tenant, thread, 'default', prompt_id, version_id, slug, 1, 'normal', env, status, '{}'::json, metadata::json,
        to_timestamp(created / 1000.0), to_timestamp(started / 1000.0), to_timestamp(finished / 1000.0), output, usage::json, cost::json, 1
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::float8[], $11::float8[], $12::float8[], $13::text[], $14::text[], $15::text[])
        AS x(id, tenant, thread, prompt_id, version_id, slug, env, status, metadata, created, started, finished, output, usage, cost)`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.tenant),
        rows.map((r) => r.thread),
        rows.map((r) => r.promptId),
        rows.map((r) => r.versionId),
        rows.map((r) => r.slug),
        rows.map((r) => r.environment),
        rows.map((r) => r.status),
        rows.map((r) => r.metadata),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.startedAt),
        rows.map((r) => r.finishedAt),
        rows.map((r) => (r.status === "completed" ? "ok" : null)),
        rows.map((r) => r.tokenUsage),
        rows.map((r) => r.cost),
      ] as never,
    );
  }
  await sql`ANALYZE runs`;
}

/** Median of 5 timed calls after one warm-up, in ms. */
async function median(call: () => Promise<unknown>): Promise<number> {
  await call();
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2]!;
}

async function timeQueries(label: string, store: Store, fixture: Fixture, deepCursor: string): Promise<void> {
  const tenant = fixture.tenants[1]!;
  const filters: Array<[string, RunListFilter, string | null]> = [
    ["no filter", {}, null],
    ["thread", { threadId: "00000000-0000-7000-8000-000000000042" }, null],
    ["prompt (5 % of runs)", { slug: "p7" }, null],
    ["prompt + version", { slug: "p7", version: 1 }, null],
    ["status=failed (2 %)", { status: "failed" }, null],
    ["phase=running (0.5 %)", { phase: "running" }, null],
    ["environment=staging (9 %)", { environment: "staging" }, null],
    ["environment=rare (1 %)", { environment: "rare" }, null],
    ["metadata.customer (0.1 %)", { metadata: { customer: "c401" } }, null],
    [
      "one day (createdAfter/Before)",
      { createdAfter: new Date(START + 100 * DAY), createdBefore: new Date(START + 101 * DAY) },
      null,
    ],
    [
      "completed + prompt + a month",
      {
        status: "completed",
        slug: "p3",
        createdAfter: new Date(START + 200 * DAY),
        createdBefore: new Date(START + 230 * DAY),
      },
      null,
    ],
    ["deep page (cursor 200,000 runs in)", {}, deepCursor],
    ["deep page, prompt filter", { slug: "p7" }, deepCursor],
  ];
  for (const [name, filter, cursor] of filters) {
    const ms = await median(() => store.runs.list(tenant, filter, { cursor, limit: 50 }));
    const count = (await store.runs.list(tenant, filter, { cursor, limit: 50 })).items.length;
    console.log(`${label}\t${name}\t${ms.toFixed(2)} ms\t(${count} items)`);
  }
  for (const groupBy of ["day", "model"] as const) {
    const query: UsageQuery = { from: new Date(START), to: new Date(START + 366 * DAY), groupBy };
    const ms = await median(() => store.runs.usage(tenant, query));
    console.log(`${label}\tusage, a year by ${groupBy} (${TOTAL / TENANTS} runs)\t${ms.toFixed(0)} ms`);
  }
}

/** The cursor after the 200,000th newest run of every tenant (a deep page). */
const deepCursorAt = (createdAt: number, id: string) => encodeCursor([createdAt, id]);

async function measureSqlite(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), "promptrun-lists-"));
  try {
    const store = await openSqliteStore({ url: `file:${join(directory, "runs.db")}` });
    const fixture = await seed(store);
    const started = performance.now();
    fillSqlite(store.raw, fixture);
    console.log(`sqlite\tfilled ${TOTAL} runs in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const deep = store.raw
      .query<{ created_at: number; id: string }, [string]>(
        "select created_at, id from runs where tenant_id = ? order by created_at desc, id desc limit 1 offset 200000",
      )
      .get(fixture.tenants[1]!);
    await timeQueries("sqlite", store, fixture, deepCursorAt(deep?.created_at ?? START, deep?.id ?? ""));
    await store.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function measurePostgres(): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const name = `promptrun_lists_${process.pid}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  try {
    const store = await openPostgresStore({ url: url.toString() });
    const fixture = await seed(store);
    const started = performance.now();
    await fillPostgres(sql, fixture);
    console.log(`postgres\tfilled ${TOTAL} runs in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const [deep] = await sql<
      { created_at: Date; id: string }[]
    >`select created_at, id from runs where tenant_id = ${fixture.tenants[1]!} order by created_at desc, id desc limit 1 offset 200000`;
    await timeQueries(
      "postgres",
      store,
      fixture,
      deepCursorAt(deep?.created_at.getTime() ?? START, deep?.id ?? ""),
    );
    await store.close();
  } finally {
    await sql.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
    await admin.end();
  }
}

if (ONLY !== "postgres") await measureSqlite();
if (ONLY !== "sqlite") await measurePostgres();
