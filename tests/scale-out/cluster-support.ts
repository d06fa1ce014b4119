/**
 * Real Postgres and Redis for the scale-out suite (`PROMPTRUN_TEST_POSTGRES_URL`,
 * `PROMPTRUN_TEST_REDIS_URL`; defaults: the local servers), through Bun's built-in clients so
 * the suite needs no driver of its own. Each suite gets a fresh database and Redis key prefix.
 */
import { RedisClient, SQL } from "bun";

export const POSTGRES_URL =
  process.env.PROMPTRUN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env.PROMPTRUN_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const redacted = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");

const within = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    promise,
    Bun.sleep(ms).then(() => {
      throw new Error("timeout");
    }),
  ]);

/**
 * Whether both servers answer. When one does not, prints one line saying what is skipped and
 * why, so a skipped suite is never mistaken for a passing one.
 */
export async function checkPostgresAndRedis(): Promise<boolean> {
  const missing: string[] = [];
  const sql = new SQL(POSTGRES_URL, { connectionTimeout: 2, max: 1 });
  try {
    await within(sql`SELECT 1`, 3_000);
  } catch {
    missing.push(`postgres at ${redacted(POSTGRES_URL)}`);
  } finally {
    await sql.close().catch(() => {});
  }
  const redis = new RedisClient(REDIS_URL, { connectionTimeout: 2_000, autoReconnect: false });
  try {
    await within(redis.send("PING", []), 3_000);
  } catch {
    missing.push(`redis at ${redacted(REDIS_URL)}`);
  } finally {
    redis.close();
  }
  if (missing.length > 0) console.warn(`scale-out suite skipped: no ${missing.join(" and no ")} reachable`);
  return missing.length === 0;
}

export interface ClusterDatabase {
  /** URL of the fresh database. */
  url: string;
  /** A query client on it (tests read leases and memory rows directly). */
  sql: SQL;
  drop(): Promise<void>;
}

/** Creates `promptrun_scaleout_<random>` on the test server. */
export async function createClusterDatabase(): Promise<ClusterDatabase> {
  const name = `promptrun_scaleout_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = new SQL(POSTGRES_URL, { max: 1 });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const sql = new SQL(url.toString(), { max: 2 });
  return {
    url: url.toString(),
    sql,
    async drop() {
      await sql.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.close();
    },
  };
}

/** A Redis key prefix of its own; `cleanup` deletes its keys. */
export function redisPrefix() {
  const prefix = `promptrun-scaleout-${crypto.randomUUID().slice(0, 8)}`;
  return {
    prefix,
    async cleanup() {
      const redis = new RedisClient(REDIS_URL);
      try {
        const keys = (await redis.send("KEYS", [`${prefix}:*`])) as string[];
        if (keys.length > 0) await redis.send("DEL", keys);
      } finally {
        redis.close();
      }
    },
  };
}
