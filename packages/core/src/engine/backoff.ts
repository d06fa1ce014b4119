/** The longest Retry-After we wait for while holding the run's slot. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * Exponential backoff with full jitter: a uniform delay in [0, min(max, base × 2^retry)),
 * retry counting from 0 for the first retry. A provider's Retry-After is a floor.
 */
export function retryDelayMs(options: {
  retry: number;
  baseMs: number;
  maxMs: number;
  retryAfterMs: number | null;
  random: () => number;
}): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(options.retry, 30));
  const jittered = Math.floor(options.random() * ceiling);
  if (options.retryAfterMs === null) return jittered;
  return Math.max(Math.min(options.retryAfterMs, MAX_RETRY_AFTER_MS), jittered);
}

/** `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, in ms; null when absent or unreadable. */
export function parseRetryAfter(headers: Record<string, string> | undefined, now: Date): number | null {
  if (!headers) return null;
  const lowerCased = Object.fromEntries(
    Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]),
  );
  const milliseconds = lowerCased["retry-after-ms"];
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds.trim())) return Number(milliseconds);
  const value = lowerCased["retry-after"]?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now.getTime());
}
