/**
 * Postgres + Redis for the scale-out bench, through Bun's built-in clients: a fresh database and
 * a Redis key prefix per measurement, both removed by dispose().
 */
import { RedisClient, SQL } from "bun";

const redacted = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");

const within = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    promise,
    Bun.sleep(ms).then(() => {
      throw new Error("timeout");
    }),
  ]);

/** Null when both answer, else what is missing (e.g. "no redis at redis://127.0.0.1:6379 reachable"). */
export async function scaleOutStorageMissing(postgresUrl: string, redisUrl: string): Promise<string | null> {
  const missing: string[] = [];
  const sql = new SQL(postgresUrl, { connectionTimeout: 2, max: 1 });
  try {
    await within(sql`SELECT 1`, 3_000);
  } catch {
    missing.push(`postgres at ${redacted(postgresUrl)}`);
  } finally {
    await sql.close().catch(() => {});
  }
  const redis = new RedisClient(redisUrl, { connectionTimeout: 2_000, autoReconnect: false });
  try {
    await within(redis.send("PING", []), 3_000);
  } catch {
    missing.push(`redis at ${redacted(redisUrl)}`);
  } finally {
    redis.close();
  }
  return missing.length ? `no ${missing.join(" and no ")} reachable` : null;
}

export interface ScaleOutStorage {
  /** DATABASE_URL, REDIS_URL and PROMPTRUN_REDIS_PREFIX for the servers. */
  env: Record<string, string>;
  /** Runs no longer pending (completed or failed), read from the database. */
  finishedRuns(): Promise<number>;
  /** Drops the database (closing its connections) and deletes the prefix's Redis keys. */
  dispose(): Promise<void>;
}

export async function createScaleOutStorage(postgresUrl: string, redisUrl: string): Promise<ScaleOutStorage> {
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const name = `promptrun_bench_${suffix}`;
  const prefix = `promptrun-bench-${suffix}`;
  const admin = new SQL(postgresUrl, { max: 1 });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const sql = new SQL(url.toString(), { max: 1 });
  return {
    env: { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, PROMPTRUN_REDIS_PREFIX: prefix },
    async finishedRuns() {
      const [row] = await sql`SELECT count(*)::int AS finished FROM runs WHERE status <> 'pending'`;
      return (row as { finished: number }).finished;
    },
    async dispose() {
      await sql.close().catch(() => {});
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.close();
      }
      const redis = new RedisClient(redisUrl);
      try {
        const keys = (await redis.send("KEYS", [`${prefix}:*`])) as string[];
        if (keys.length > 0) await redis.send("DEL", keys);
      } finally {
        redis.close();
      }
    },
  };
}
