/**
 * Test helpers: a throwaway database per test file on a real Postgres server
 * (`PROMPTRUN_TEST_POSTGRES_URL`, default postgres://postgres@127.0.0.1:5432/test).
 */
import postgres from "postgres";
import { redactUrl } from "../redact-url.ts";

export const TEST_POSTGRES_URL =
  process.env.PROMPTRUN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Whether the server answers within a second. */
export const postgresReachable = async (url: string): Promise<boolean> => {
  const client = postgres(url, { max: 1, connect_timeout: 1, onnotice: () => {} });
  try {
    await client`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await client.end({ timeout: 1 });
  }
};

/**
 * Checks the server once per test file; when it is not reachable, says so on one line so a
 * skipped suite is never mistaken for a passing one.
 */
export const checkPostgres = async (url = TEST_POSTGRES_URL): Promise<boolean> => {
  const available = await postgresReachable(url);
  if (!available) console.warn(`postgres not reachable at ${redactUrl(url)}: skipping Postgres store tests`);
  return available;
};

/** Every table, referencing ones before the ones they reference (DELETE order). */
const TABLES_CHILDREN_FIRST = [
  "kb_chunks",
  "kb_documents",
  "knowledge_bases",
  "console_sessions",
  "webhook_attempts",
  "webhook_deliveries",
  "webhook_events",
  "webhook_payloads",
  "webhooks",
  "env_vars",
  "environments",
  "idempotency_keys",
  "messages",
  "runs",
  "workflow_idempotency_keys",
  "workflow_runs",
  "workflow_tags",
  "workflow_versions",
  "workflows",
  "threads",
  "prompt_tag_history",
  "prompt_tags",
  "prompt_versions",
  "prompts",
  "api_keys",
  "tenants",
];

export interface TestDatabase {
  /** URL of the fresh, empty database. */
  url: string;
  /** Empties every table of the database (after the migrations created them). */
  truncate(): Promise<void>;
  /** Drops the database, closing whatever connections are still open to it. */
  drop(): Promise<void>;
}

/** Creates `promptrun_test_<random>` on the server of `serverUrl`. */
export const createTestDatabase = async (serverUrl = TEST_POSTGRES_URL): Promise<TestDatabase> => {
  const name = `promptrun_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const inDatabase = postgres(url.toString(), { max: 1, onnotice: () => {} });
  return {
    url: url.toString(),
    async truncate() {
      // DELETE, not TRUNCATE: on a few rows it takes a millisecond instead of ~150 ms.
      const tables = await inDatabase<{ name: string }[]>`
        SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`;
      const unknown = tables.filter((table) => !TABLES_CHILDREN_FIRST.includes(table.name));
      if (unknown.length > 0)
        throw new Error(`truncate does not know table(s) ${unknown.map((t) => t.name)}`);
      const present = new Set(tables.map((table) => table.name));
      await inDatabase.begin(async (transaction) => {
        for (const table of TABLES_CHILDREN_FIRST) {
          if (present.has(table)) await transaction.unsafe(`DELETE FROM "${table}"`);
        }
      });
    },
    async drop() {
      await inDatabase.end({ timeout: 1 });
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end({ timeout: 1 });
    },
  };
};
