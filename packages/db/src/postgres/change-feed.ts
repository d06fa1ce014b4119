import type { Sql } from "postgres";

/** The NOTIFY channel on which every instance announces writes to cached tables. */
export const STORE_CHANGES_CHANNEL = "promptrun_store_changes";

/**
 * Invalidation of the read caches across instances. A write clears this process's caches at
 * once and NOTIFYs the others, which clear theirs when the notification arrives (normally within
 * milliseconds of the commit). Delivery is not guaranteed (a listener reconnecting misses what
 * was sent meanwhile; it clears everything when it listens again), so the caches' TTL bounds
 * how long another instance can serve a stale entry.
 */
export interface ChangeFeed {
  /** A cache to clear whenever a write here or elsewhere may have changed what it holds. */
  register(clear: () => void): void;
  /** After a committed write: clears here now and tells every other instance. Never throws. */
  announce(): Promise<void>;
  /** Starts listening for the other instances' announcements. */
  listen(): Promise<void>;
  /** Stops listening (before the pool ends). */
  close(): Promise<void>;
}

export const createChangeFeed = (client: Sql): ChangeFeed => {
  const clears: Array<() => void> = [];
  const clearAll = () => {
    for (const clear of clears) clear();
  };
  let unlisten: (() => Promise<void>) | null = null;

  return {
    register(clear) {
      clears.push(clear);
    },
    async announce() {
      clearAll();
      try {
        await client`select pg_notify(${STORE_CHANGES_CHANNEL}, '')`;
      } catch {
        // The write is committed: a lost announcement only lets other instances serve the
        // stale entry until its TTL ends.
      }
    },
    async listen() {
      // onlisten runs on every (re)connect of the listening connection: clear what may have
      // been missed while it was down.
      const listening = await client.listen(STORE_CHANGES_CHANNEL, clearAll, clearAll);
      unlisten = () => listening.unlisten();
    },
    async close() {
      await unlisten?.().catch(() => {});
      unlisten = null;
    },
  };
};
