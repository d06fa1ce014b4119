import {
  type Clock,
  CONSOLE_SESSION_RULES,
  createSignInFailures,
  type RateLimitService,
  type SignInFailures,
} from "@promptrun/core";
import { assertRedisReachable, createRedisClient } from "./redis-client.ts";
import { createRedisClusterSignals, type RedisClusterSignals } from "./redis-cluster-signals.ts";
import { createRedisRateLimiter } from "./redis-rate-limiter.ts";
import { createRedisSignInFailures } from "./redis-sign-in-failures.ts";
import { createRedisThreadEventBus, type RedisThreadEventBus } from "./redis-thread-event-bus.ts";

export interface RedisCoordinationOptions {
  url: string;
  /** Prefix of every key and channel (default `promptrun`): several deployments can share a Redis. */
  keyPrefix?: string;
  clock: Clock;
  replayBufferSeconds: number;
  rateLimit: { perSecond: number; burst: number };
  onError?: (message: string, error: unknown) => void;
}

/** What several instances share through Redis (see docs/DEPLOYMENT.md). */
export interface RedisCoordination {
  events: RedisThreadEventBus;
  rateLimits: RateLimitService;
  /** Failed console sign-ins per client address, counted across instances. */
  signInFailures: SignInFailures;
  signals: RedisClusterSignals;
  close(): Promise<void>;
}

/**
 * Connects to Redis (fails fast with a clear message when it does not answer) and builds the
 * cross-instance thread event bus, rate limiter, failed sign-in count and cluster signals over three connections: one
 * for commands, one reading the event stream, one subscribed to the signals.
 */
export const connectRedisCoordination = async (
  options: RedisCoordinationOptions,
): Promise<RedisCoordination> => {
  const keyPrefix = options.keyPrefix ?? "promptrun";
  const onError = options.onError ?? (() => {});
  const commands = createRedisClient(options.url, {
    onError: (error) => onError("redis connection error", error),
  });
  try {
    await assertRedisReachable(commands, options.url);
  } catch (error) {
    commands.disconnect();
    throw error;
  }
  const events = await createRedisThreadEventBus({
    url: options.url,
    keyPrefix,
    replayBufferSeconds: options.replayBufferSeconds,
    clock: options.clock,
    onError,
  });
  const signals = await createRedisClusterSignals({
    url: options.url,
    keyPrefix,
    publisher: commands,
    onError,
  });
  const rateLimits = createRedisRateLimiter({
    client: commands,
    keyPrefix,
    rateLimit: options.rateLimit,
    clock: options.clock,
    onError,
  });
  const signInRules = {
    limit: CONSOLE_SESSION_RULES.maxFailures,
    windowMs: CONSOLE_SESSION_RULES.failureWindowMs,
  };
  const signInFailures = createRedisSignInFailures({
    client: commands,
    keyPrefix,
    ...signInRules,
    fallback: createSignInFailures({ clock: options.clock, ...signInRules }),
    onError,
  });
  let closing: Promise<void> | null = null;
  return {
    events,
    rateLimits,
    signInFailures,
    signals,
    close() {
      closing ??= (async () => {
        await signals.close();
        await events.close();
        await commands.quit().catch(() => commands.disconnect());
      })();
      return closing;
    },
  };
};
