/** Streams open at once on one (tenant, thread) unless configured otherwise. */
export const DEFAULT_MAX_STREAMS_PER_THREAD = 50;

/** The cap's key for one thread of one tenant (thread ids are only unique per tenant). */
export const threadStreamKey = (tenantId: string, threadId: string): string => `${tenantId}\u0000${threadId}`;

/**
 * Bounds the streams open at once on one (tenant, thread): SSE streams and tRPC `thread.onEvents`
 * subscriptions count against the same slots. A stream token is valid for one thread, so this
 * also bounds what one leaked token can hold open.
 */
export interface ThreadStreamCap {
  /** Takes a slot for `key`; null when the key is at its cap. Call the returned release exactly once. */
  reserve(key: string): (() => void) | null;
  /** Streams currently counted under `key` (tests and diagnostics). */
  openFor(key: string): number;
}

export function createThreadStreamCap(maxPerThread: number): ThreadStreamCap {
  const open = new Map<string, number>();
  return {
    reserve(key) {
      const count = open.get(key) ?? 0;
      if (count >= maxPerThread) return null;
      open.set(key, count + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const remaining = (open.get(key) ?? 1) - 1;
        // Emptied keys are dropped, so memory follows the threads that have streams open.
        if (remaining <= 0) open.delete(key);
        else open.set(key, remaining);
      };
    },
    openFor: (key) => open.get(key) ?? 0,
  };
}
