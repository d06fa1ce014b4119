import { randomBytes } from "node:crypto";
import { type SignInFailures, tooManySignInFailures } from "@promptrun/core";
import { type LuaScript, luaScript, type RedisClient, runLuaScriptWithin } from "./redis-client.ts";

export interface RedisSignInFailuresOptions {
  client: RedisClient;
  /** Windows are `<prefix>:sign-in-failures:<address>`. */
  keyPrefix: string;
  /** Failures allowed within the window; the next attempt is refused. */
  limit: number;
  windowMs: number;
  /**
   * Counts while Redis does not answer: a sign-in is never let through unchecked, so a Redis
   * outage leaves each instance counting on its own (as without Redis) instead of not at all.
   */
  fallback: SignInFailures;
  onError?: (message: string, error: unknown) => void;
  /** Longest wait for Redis before the fallback answers (default 500 ms). */
  timeoutMs?: number;
}

/** Both scripts start here: Redis's time in ms, the rules, and the failures older than the window dropped. */
const FORGET_OLD_FAILURES = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
`;

/** Answers 0, or once `limit` are counted the ms until the oldest of them leaves the window. */
const CHECK = luaScript(`${FORGET_OLD_FAILURES}if redis.call('ZCARD', KEYS[1]) < limit then
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
`);

/** Adds a failure at Redis's time; keeps the newest `limit` of the window; the key expires with its newest failure. */
const RECORD = luaScript(`${FORGET_OLD_FAILURES}redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(limit + 1))
redis.call('PEXPIRE', KEYS[1], window)
return 1
`);

/**
 * Failed console sign-ins counted per client address in one sliding window per address that
 * every instance on the Redis shares (a sorted set of failure times, Redis's clock), so an
 * address gets `limit` wrong keys per window from the whole cluster, not from each instance.
 */
export const createRedisSignInFailures = (options: RedisSignInFailuresOptions): SignInFailures => {
  const timeoutMs = options.timeoutMs ?? 500;
  const keyOf = (address: string) => `${options.keyPrefix}:sign-in-failures:${address}`;

  const run = (script: LuaScript, address: string, extra: string[] = []) =>
    runLuaScriptWithin(
      timeoutMs,
      options.client,
      script,
      [keyOf(address)],
      [options.windowMs, options.limit, ...extra],
    );

  return {
    async check(address) {
      let waitMs: number;
      try {
        waitMs = Number(await run(CHECK, address));
      } catch (error) {
        options.onError?.("sign-in failure check failed; this instance's own count answers", error);
        return options.fallback.check(address);
      }
      if (waitMs > 0) throw tooManySignInFailures(Math.max(1, Math.ceil(waitMs / 1000)));
    },
    async record(address) {
      try {
        // A random member: two failures in the same millisecond are two failures.
        await run(RECORD, address, [randomBytes(8).toString("hex")]);
      } catch (error) {
        options.onError?.("sign-in failure not shared; this instance counts it", error);
        await options.fallback.record(address);
      }
    },
  };
};
