import type { PromptVersion } from "@promptrun/contract";

/** Options of the prompt cache of `client.prompts.get` (docs: README "Prompts over REST"). */
export interface PromptCacheOptions {
  /** A fetched version is served without asking the server for this many milliseconds. */
  cacheTtlMs: number;
  /**
   * After that, it is served stale this many milliseconds more while one background request
   * revalidates it (`If-None-Match`: a `304` only renews it). Default 60 000.
   */
  staleTtlMs?: number;
  /** Versions kept at once; the least recently fetched goes first. Default 500. */
  maxEntries?: number;
  /** Milliseconds now (tests); default `Date.now`. */
  now?: () => number;
}

/** One cached answer: the version, its ETag, and when the server last confirmed it. */
export interface PromptCacheEntry {
  version: PromptVersion;
  etag: string | null;
  confirmedAt: number;
}

/** `fresh`: serve; `stale`: serve and revalidate in the background; `expired`: ask first. */
export type PromptCacheState = "fresh" | "stale" | "expired";

export interface PromptCache {
  lookup(key: string): { entry: PromptCacheEntry; state: PromptCacheState } | null;
  /** Stores a version just fetched (or confirmed by a 304 when `version` is the entry's own). */
  confirm(key: string, version: PromptVersion, etag: string | null): void;
}

const DEFAULT_STALE_TTL_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 500;

export function createPromptCache(options: PromptCacheOptions): PromptCache {
  const entries = new Map<string, PromptCacheEntry>();
  const now = options.now ?? Date.now;
  const staleTtlMs = options.staleTtlMs ?? DEFAULT_STALE_TTL_MS;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  return {
    lookup(key) {
      const entry = entries.get(key);
      if (entry === undefined) return null;
      const age = now() - entry.confirmedAt;
      const state =
        age < options.cacheTtlMs ? "fresh" : age < options.cacheTtlMs + staleTtlMs ? "stale" : "expired";
      return { entry, state };
    },
    confirm(key, version, etag) {
      entries.delete(key);
      entries.set(key, { version, etag, confirmedAt: now() });
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
    },
  };
}
