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

/**
 * The same response with a body that calls `onEnd` once when the stream finishes, errors or the
 * client goes away. Pull-based with no buffer of its own (highWaterMark 0), so the inner
 * stream's backpressure reaches the socket unchanged.
 */
export function onBodyEnd(response: Response, onEnd: () => void): Response {
  const inner = response.body;
  if (inner === null) {
    onEnd();
    return response;
  }
  const reader = inner.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          onEnd();
          controller.error(error);
          return;
        }
        if (next.done) {
          onEnd();
          controller.close();
          return;
        }
        controller.enqueue(next.value);
      },
      async cancel(reason) {
        onEnd();
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
