/** Waits `ms` milliseconds; resolves early (to false) when `signal` aborts, true otherwise. */
export function delay(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Exponential backoff with jitter: attempt 1 waits about `initialMs`, doubling up to `maxMs`. */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random = Math.random,
): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  // Jitter between 50% and 100% keeps a crowd of reconnecting browsers from arriving in step.
  return Math.round(ceiling * (0.5 + random() * 0.5));
}
