import { type Clock, type RateLimitService, rateLimited } from "@promptrun/core";
import { luaScript, type RedisClient, runLuaScriptWithin } from "./redis-client.ts";

type Action = Parameters<RateLimitService["take"]>[1];

export interface RedisRateLimiterOptions {
  client: RedisClient;
  /** Buckets are `<prefix>:rate:<action>:<tenant>`. */
  keyPrefix: string;
  /** Tokens added per second, and the bucket size. */
  rateLimit: { perSecond: number; burst: number };
  /** For state(), which answers locally. */
  clock: Clock;
  /** Redis unreachable: the request is let through (availability over strictness) and this is told. */
  onError?: (message: string, error: unknown) => void;
  /** Longest wait for Redis before a request is let through unchecked (default 500 ms). */
  timeoutMs?: number;
}

/**
 * One token bucket per (tenant, action) in a Redis hash, refilled and taken atomically by a
 * script on Redis's clock: every instance draws from the same bucket. Returns whether a token
 * was taken and the tokens left (as text: Redis truncates Lua numbers to integers).
 */
const TAKE = luaScript(`
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local taken = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return { taken, tostring(tokens) }
`);

interface Seen {
  tokens: number;
  at: number;
}

/**
 * RateLimitService shared by every instance (Redis). state() — for the RateLimit-* headers —
 * answers from the bucket as this instance last saw it, refilled since: exact for the instance
 * that just took a token, approximate for the others.
 */
export const createRedisRateLimiter = (options: RedisRateLimiterOptions): RateLimitService => {
  const perSecond = Math.max(options.rateLimit.perSecond, Number.EPSILON);
  const burst = Math.max(1, options.rateLimit.burst);
  // A full bucket holds no information: its key expires once it would have refilled.
  const ttlMs = Math.ceil((burst / perSecond) * 1000) + 1_000;
  const seen = new Map<string, Seen>();
  const timeoutMs = options.timeoutMs ?? 500;
  const keyOf = (tenantId: string, action: Action) => `${options.keyPrefix}:rate:${action}:${tenantId}`;

  const refilled = (entry: Seen | undefined, now: number) =>
    entry === undefined
      ? burst
      : Math.min(burst, entry.tokens + (Math.max(0, now - entry.at) / 1000) * perSecond);

  return {
    async take(tenantId, action) {
      const key = keyOf(tenantId, action);
      let reply: unknown;
      try {
        reply = await runLuaScriptWithin(timeoutMs, options.client, TAKE, [key], [perSecond, burst, ttlMs]);
      } catch (error) {
        options.onError?.("rate limit check failed; the request is let through", error);
        return;
      }
      const [taken, left] = reply as [number, string];
      const tokens = Number(left);
      seen.delete(key);
      seen.set(key, { tokens, at: options.clock.now().getTime() });
      if (seen.size > 100_000) seen.delete(seen.keys().next().value as string);
      if (taken !== 1) {
        const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / perSecond));
        throw rateLimited(
          `rate limit exceeded for ${action}; retry in ${retryAfterSeconds} s`,
          retryAfterSeconds,
        );
      }
    },
    state(tenantId, action) {
      const tokens = refilled(seen.get(keyOf(tenantId, action)), options.clock.now().getTime());
      return {
        limit: burst,
        remaining: Math.floor(tokens),
        resetSeconds: Math.ceil((burst - tokens) / perSecond),
      };
    },
  };
};
