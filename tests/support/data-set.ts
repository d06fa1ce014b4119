/**
 * The storage one test server (and its restarts) runs on, chosen by `PROMPTRUN_E2E_DATABASE`:
 * `sqlite` (default) is a SQLite file in a temporary directory; `postgres` is a fresh database
 * on the test Postgres (`PROMPTRUN_TEST_POSTGRES_URL`) plus a Redis key prefix of its own on the
 * test Redis (`PROMPTRUN_TEST_REDIS_URL`), with one random PROMPTRUN_SECRET for the data set's
 * lifetime so a restart can still decrypt what the first server stored.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisClient } from "bun";
import postgres from "postgres";
import { toPostgresPlaceholders } from "./sql-placeholders.ts";

export type E2eDialect = "sqlite" | "postgres";

/** The dialect the whole run uses; anything but the two names is a mistake worth failing on. */
export const e2eDialect: E2eDialect = (() => {
  const chosen = process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite";
  if (chosen !== "sqlite" && chosen !== "postgres") {
    throw new Error(`PROMPTRUN_E2E_DATABASE must be "sqlite" or "postgres", not "${chosen}"`);
  }
  return chosen;
})();

export const onPostgres = e2eDialect === "postgres";

export const TEST_POSTGRES_URL =
  process.env.PROMPTRUN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const TEST_REDIS_URL = process.env.PROMPTRUN_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A bound query parameter (the same set both drivers accept). */
export type SqlParameter = string | number | boolean | null;

export interface DataSet {
  dialect: E2eDialect;
  /** Temporary directory of the data set (the SQLite file lives here; tests write files here). */
  dataDir: string;
  /** What the server and the CLI need to reach the storage (DATABASE_URL, and on Postgres more). */
  env: Record<string, string>;
  /**
   * Runs one statement and returns its rows. Placeholders are `?` in both dialects. SQLite opens
   * the file read-only unless `write` is set; Postgres returns its own types (Date, parsed JSON,
   * count(*) as a string).
   */
  sql<T>(query: string, params?: SqlParameter[], options?: { write?: boolean }): Promise<T[]>;
  /** Closes connections, drops the Postgres database and Redis keys, deletes the directory. */
  dispose(): Promise<void>;
}

const randomSuffix = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);

function sqliteDataSet(dataDir: string): DataSet {
  const path = join(dataDir, "promptrun.db");
  return {
    dialect: "sqlite",
    dataDir,
    env: { DATABASE_URL: `file:${path}` },
    async sql<T>(query: string, params: SqlParameter[] = [], options: { write?: boolean } = {}) {
      // A fresh connection per call: a WAL reader never blocks the server, and nothing stays open.
      const database = new Database(path, { readonly: !options.write });
      try {
        if (options.write) database.exec("PRAGMA busy_timeout = 5000");
        return database.query(query).all(...params) as T[];
      } finally {
        database.close();
      }
    },
    async dispose() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function postgresDataSet(dataDir: string): Promise<DataSet> {
  const name = `promptrun_e2e_${randomSuffix()}`;
  const admin = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
  const redisPrefix = `promptrun-e2e-${randomSuffix()}`;
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  let disposed = false;
  return {
    dialect: "postgres",
    dataDir,
    env: {
      DATABASE_URL: url.toString(),
      REDIS_URL: TEST_REDIS_URL,
      PROMPTRUN_REDIS_PREFIX: redisPrefix,
      PROMPTRUN_SECRET: secret,
    },
    async sql<T>(query: string, params: SqlParameter[] = []) {
      const rows = await client.unsafe(toPostgresPlaceholders(query), params);
      return [...rows] as T[];
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await client.end({ timeout: 5 });
      const dropper = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} });
      try {
        // FORCE: a SIGKILLed server's or a CLI's connection may still be closing.
        await dropper.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
      const redis = new RedisClient(TEST_REDIS_URL);
      try {
        const keys = (await redis.send("KEYS", [`${redisPrefix}:*`])) as string[];
        if (keys.length > 0) await redis.send("DEL", keys);
      } finally {
        redis.close();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new data set in the run's dialect; `dataDir` is the directory to use (created if absent). */
export async function createDataSet(dataDir?: string): Promise<DataSet> {
  const directory = dataDir ?? mkdtempSync(join(tmpdir(), "promptrun-e2e-"));
  return e2eDialect === "postgres" ? postgresDataSet(directory) : sqliteDataSet(directory);
}
