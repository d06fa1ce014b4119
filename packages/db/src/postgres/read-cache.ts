/** Options of createReadCache. */
export interface ReadCacheOptions {
  /** Entries kept at once; beyond it the oldest goes. */
  maxEntries: number;
  /** How long a mutable entry is trusted without an invalidation (the cross-instance bound). */
  ttlMs: number;
  /** Milliseconds of a monotonic clock (default performance.now). */
  now?: () => number;
}

/** A bounded memory of lookups, cleared as a whole when what it holds may have changed. */
export interface ReadCache<V> {
  /**
   * The remembered value of `key`, or `load()`'s. A miss (null) is never remembered. `immutable`
   * values never expire (only size evicts them). A load that overlapped a clear() is returned but
   * not kept: it may have read the state from before the change.
   */
  get(key: string, load: () => Promise<V | null>, options?: { immutable?: boolean }): Promise<V | null>;
  /** Forgets every entry, and every load already under way. */
  clear(): void;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

export const createReadCache = <V>(options: ReadCacheOptions): ReadCache<V> => {
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry<V>>();
  let generation = 0;

  return {
    async get(key, load, getOptions) {
      const hit = entries.get(key);
      if (hit !== undefined) {
        if (hit.expiresAt > now()) return hit.value;
        entries.delete(key);
      }
      const startedIn = generation;
      const value = await load();
      if (value === null || startedIn !== generation) return value;
      if (entries.size >= options.maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      const expiresAt = getOptions?.immutable ? Number.POSITIVE_INFINITY : now() + options.ttlMs;
      entries.set(key, { value, expiresAt });
      return value;
    },
    clear() {
      generation++;
      entries.clear();
    },
  };
};
