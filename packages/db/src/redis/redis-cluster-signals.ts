import type { ClusterSignals } from "@promptrun/core";
import { createRedisClient, type RedisClient } from "./redis-client.ts";

export interface RedisClusterSignalsOptions {
  url: string;
  /** The channel is `<prefix>:signals`. */
  keyPrefix: string;
  /** Connection used to publish (shared with other users of the same Redis). */
  publisher: RedisClient;
  /** Announcements of work closer together than this are merged into one (default 20 ms). */
  workCoalesceMs?: number;
  onError?: (message: string, error: unknown) => void;
}

export interface RedisClusterSignals extends ClusterSignals {
  close(): Promise<void>;
}

const WORK = "work";
const CANCEL = "cancel:";

/**
 * ClusterSignals over Redis pub/sub: fire-and-forget notices (a missed one only delays work until
 * the next poll or lease renewal). ioredis re-subscribes by itself after a reconnect.
 */
export const createRedisClusterSignals = async (
  options: RedisClusterSignalsOptions,
): Promise<RedisClusterSignals> => {
  const channel = `${options.keyPrefix}:signals`;
  const onError = options.onError ?? (() => {});
  const subscriber = createRedisClient(options.url, {
    longLived: true,
    onError: (error) => onError("redis connection error", error),
  });
  const handlers = new Set<{ onWork(): void; onCancel(runId: string): void }>();
  subscriber.on("message", (from: string, message: string) => {
    if (from !== channel) return;
    for (const handler of handlers) {
      try {
        if (message === WORK) handler.onWork();
        else if (message.startsWith(CANCEL)) handler.onCancel(message.slice(CANCEL.length));
      } catch (error) {
        onError("a cluster signal handler threw", error);
      }
    }
  });
  await subscriber.subscribe(channel);

  const publish = (message: string) => {
    options.publisher.publish(channel, message).catch((error: unknown) => {
      onError("publishing a cluster signal failed", error);
    });
  };
  // Under load every run's end announces work: one message per period is enough to wake everyone.
  const coalesceMs = options.workCoalesceMs ?? 20;
  let workTimer: ReturnType<typeof setTimeout> | undefined;
  let lastWorkAt = 0;

  return {
    announceWork() {
      if (workTimer !== undefined) return;
      const wait = lastWorkAt + coalesceMs - Date.now();
      if (wait <= 0) {
        lastWorkAt = Date.now();
        publish(WORK);
        return;
      }
      workTimer = setTimeout(() => {
        workTimer = undefined;
        lastWorkAt = Date.now();
        publish(WORK);
      }, wait);
    },
    announceCancel(runId) {
      publish(`${CANCEL}${runId}`);
    },
    listen(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    async close() {
      clearTimeout(workTimer);
      handlers.clear();
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
};
