import { createHash } from "node:crypto";
import Redis from "ioredis";
import { redactUrl } from "../redact-url.ts";

export type RedisClient = Redis;

export interface RedisClientOptions {
  /**
   * For a connection that waits in blocking commands (XREAD BLOCK) or subscribes: its commands
   * wait across reconnects instead of failing after a few retries.
   */
  longLived?: boolean;
  /** Connection errors (ioredis reconnects by itself meanwhile). */
  onError?: (error: unknown) => void;
}

/** An ioredis connection (it reconnects, and re-subscribes, on its own). */
export const createRedisClient = (url: string, options: RedisClientOptions = {}): RedisClient => {
  const client = new Redis(url, {
    maxRetriesPerRequest: options.longLived ? null : 3,
    connectionName: "promptrun",
  });
  let lastReportAt = 0;
  client.on("error", (error: unknown) => {
    // A Redis outage repeats the same error on every reconnect attempt: report it now and then.
    if (Date.now() - lastReportAt < 5_000) return;
    lastReportAt = Date.now();
    options.onError?.(error);
  });
  return client;
};

/** Waits for the server to answer a PING, or throws after `timeoutMs` with the URL (password hidden). */
export const assertRedisReachable = async (client: RedisClient, url: string, timeoutMs = 5_000) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The connection's own error says why (refused, unknown host, auth), not the retry counter.
  let cause: unknown;
  const remember = (error: unknown) => {
    cause = error;
  };
  client.on("error", remember);
  try {
    await Promise.race([
      client.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer")), timeoutMs);
      }),
    ]);
  } catch (error) {
    const reason = cause ?? error;
    throw new Error(
      `cannot reach Redis at ${redactUrl(url)}: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  } finally {
    clearTimeout(timer);
    client.off("error", remember);
  }
};

export interface LuaScript {
  source: string;
  sha1: string;
}

export const luaScript = (source: string): LuaScript => ({
  source,
  sha1: createHash("sha1").update(source).digest("hex"),
});

/** EVALSHA, falling back to EVAL the first time a server has not cached the script. */
export const runLuaScript = async (
  client: RedisClient,
  script: LuaScript,
  keys: string[],
  args: Array<string | number>,
): Promise<unknown> => {
  try {
    return await client.evalsha(script.sha1, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
    return client.eval(script.source, keys.length, ...keys, ...args);
  }
};

/** runLuaScript, rejected once `timeoutMs` pass without an answer (a request never waits long on Redis). */
export const runLuaScriptWithin = async (
  timeoutMs: number,
  client: RedisClient,
  script: LuaScript,
  keys: string[],
  args: Array<string | number>,
): Promise<unknown> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      runLuaScript(client, script, keys, args),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("Redis did not answer in time")), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};
