import type { ThreadEvent } from "@promptrun/contract";
import { type Clock, createThreadEventHub, type ThreadEventBus } from "@promptrun/core";
import { createRedisClient, luaScript, type RedisClient, runLuaScript } from "./redis-client.ts";

export interface RedisThreadEventBusOptions {
  url: string;
  /** Prefix of the keys this bus uses (`<prefix>:events`, `<prefix>:event-seq`). */
  keyPrefix: string;
  replayBufferSeconds: number;
  clock: Clock;
  maxBufferedEventsPerThread?: number;
  onError?: (message: string, error: unknown) => void;
}

export interface RedisThreadEventBus extends ThreadEventBus {
  /** Threads held locally (buffered events or listeners). */
  threadCount(): number;
}

/**
 * Appends one event to the shared stream with the next id: max(last + 1, Redis time in µs), so
 * ids increase across instances (one Redis clock) and stay later than any before a restart. The
 * stream entry id is that number as `<ms>-<µs part>`; entries older than the replay window (plus
 * a margin) are trimmed as new ones arrive.
 */
const APPEND = luaScript(`
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local id = now
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if last >= id then id = last + 1 end
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if top then
  local dash = string.find(top[1], '-', 1, true)
  local topId = tonumber(string.sub(top[1], 1, dash - 1)) * 1000 + tonumber(string.sub(top[1], dash + 1))
  if topId >= id then id = topId + 1 end
end
redis.call('SET', KEYS[2], string.format('%.0f', id))
local ms = math.floor(id / 1000)
local entryId = string.format('%.0f-%d', ms, id - ms * 1000)
local minId = string.format('%.0f', math.floor(now / 1000) - tonumber(ARGV[2]))
redis.call('XADD', KEYS[1], 'MINID', '~', minId, entryId, 'd', ARGV[1])
return entryId
`);

/** `<ms>-<µs part>` → the event's sequence (its SSE id). */
const sequenceOf = (entryId: string): number => {
  const [ms, part] = entryId.split("-");
  return Number(ms) * 1000 + Number(part);
};

type StreamEntry = [id: string, fields: string[]];

const isEntries = (value: unknown): value is StreamEntry[] =>
  Array.isArray(value) &&
  value.every((entry) => Array.isArray(entry) && typeof entry[0] === "string" && Array.isArray(entry[1]));

/**
 * XREAD's reply for one stream: `[[key, entries]]` on the wire, `[key, entries]` as ioredis 6
 * hands it over; null when BLOCK timed out.
 */
const entriesOfRead = (reply: unknown): StreamEntry[] => {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const stream: unknown = typeof reply[0] === "string" ? reply : reply[0];
  const entries = Array.isArray(stream) ? stream[1] : undefined;
  return isEntries(entries) ? entries : [];
};

interface StoredEvent {
  t: string;
  h: string;
  e: ThreadEvent;
}

const parseEntry = (fields: string[]): StoredEvent | null => {
  const index = fields.indexOf("d");
  if (index < 0) return null;
  try {
    const parsed = JSON.parse(fields[index + 1] ?? "") as Partial<StoredEvent>;
    return typeof parsed.t === "string" && typeof parsed.h === "string" && typeof parsed.e?.type === "string"
      ? (parsed as StoredEvent)
      : null;
  } catch {
    return null;
  }
};

const compareEntryIds = (a: string, b: string): number => Math.sign(sequenceOf(a) - sequenceOf(b));

const BATCH = 1000;

/**
 * ThreadEventBus for several instances. Every event goes into one Redis stream (ids assigned in
 * Redis, see APPEND); every instance reads the whole stream with a blocking XREAD on its own
 * connection and feeds its local hub, which holds the listeners and the replay buffer. So a
 * subscriber on any instance gets every event of its thread, in id order, and a Last-Event-ID
 * from one instance resumes on another. At start the hub is filled from what the stream still
 * holds (the replay window), so a new instance can answer resumptions too. After a read failure
 * the stream continues from the last entry seen; if entries were trimmed meanwhile, older ids get
 * `reset` instead of a replay with a hole.
 */
export const createRedisThreadEventBus = async (
  options: RedisThreadEventBusOptions,
): Promise<RedisThreadEventBus> => {
  const streamKey = `${options.keyPrefix}:events`;
  const sequenceKey = `${options.keyPrefix}:event-seq`;
  const windowMs = options.replayBufferSeconds * 1000 + 5_000;
  const onError = options.onError ?? (() => {});
  const reportConnection = (error: unknown) => onError("redis connection error", error);
  const commands: RedisClient = createRedisClient(options.url, { onError: reportConnection });
  const reader: RedisClient = createRedisClient(options.url, { longLived: true, onError: reportConnection });

  // What the stream holds now (about one replay window) seeds the hub.
  const backlog: StreamEntry[] = [];
  for (let start = "-"; ; ) {
    const page = await commands.call("XRANGE", streamKey, start, "+", "COUNT", String(BATCH));
    const entries = isEntries(page) ? page : [];
    backlog.push(...entries);
    if (entries.length < BATCH) break;
    start = `(${entries.at(-1)![0]}`;
  }
  const [seconds, micros] = (await commands.call("TIME")) as [string, string];
  const redisNow = Number(seconds) * 1_000_000 + Number(micros);
  const hub = createThreadEventHub({
    replayBufferSeconds: options.replayBufferSeconds,
    clock: options.clock,
    knownSince: backlog.length > 0 ? sequenceOf(backlog[0]![0]) : redisNow,
    ...(options.maxBufferedEventsPerThread === undefined
      ? {}
      : { maxBufferedEventsPerThread: options.maxBufferedEventsPerThread }),
    onListenerError: (error) => onError("a thread event listener threw", error),
  });
  let lastEntryId = backlog.at(-1)?.[0] ?? "0-0";

  const deliver = (entries: StreamEntry[]) => {
    for (const [entryId, fields] of entries) {
      lastEntryId = entryId;
      const stored = parseEntry(fields);
      if (stored) hub.deliver(stored.t, stored.h, sequenceOf(entryId), stored.e);
    }
  };
  deliver(backlog);

  /** After a failed read: if what we saw last was trimmed away meanwhile, entries may be lost. */
  const checkForGap = async () => {
    const first = await commands.call("XRANGE", streamKey, "-", "+", "COUNT", "1");
    const firstId = isEntries(first) ? first[0]?.[0] : undefined;
    if (firstId !== undefined && lastEntryId !== "0-0" && compareEntryIds(firstId, lastEntryId) > 0) {
      hub.resetBefore(sequenceOf(firstId));
    }
  };

  let closed = false;
  const readLoop = (async () => {
    let failed = false;
    while (!closed) {
      try {
        if (failed) await checkForGap();
        failed = false;
        const reply = await reader.call(
          "XREAD",
          "COUNT",
          String(BATCH),
          "BLOCK",
          "2000",
          "STREAMS",
          streamKey,
          lastEntryId,
        );
        deliver(entriesOfRead(reply));
      } catch (error) {
        if (closed) return;
        failed = true;
        onError("reading the thread event stream failed; retrying", error);
        await Bun.sleep(250);
      }
    }
  })();

  return {
    publish(tenantId, threadId, event) {
      const payload = JSON.stringify({ t: tenantId, h: threadId, e: event });
      runLuaScript(commands, APPEND, [streamKey, sequenceKey], [payload, windowMs]).catch((error: unknown) =>
        onError("publishing a thread event failed (live subscribers miss it)", error),
      );
    },
    subscribe: (tenantId, threadId, listener, subscribeOptions) =>
      hub.subscribe(tenantId, threadId, listener, subscribeOptions),
    threadCount: () => hub.threadCount(),
    async close() {
      if (closed) return;
      closed = true;
      reader.disconnect();
      await readLoop;
      await commands.quit().catch(() => commands.disconnect());
      hub.close();
    },
  };
};
