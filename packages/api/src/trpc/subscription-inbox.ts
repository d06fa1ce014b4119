import type { EndReason } from "../sse/stream-registry.ts";

export interface InboxEntry<T> {
  value: T;
  /** What the entry costs while queued (its encoded size). */
  bytes: number;
}

export interface SubscriptionInbox<T> {
  /** Queues a value; over `maxQueuedBytes` the subscriber is ended as a slow consumer instead. */
  push(entry: InboxEntry<T>): void;
  /** Ends after the queued values (or at once, dropping them, with `discardBacklog`). */
  end(reason: EndReason, options: { discardBacklog: boolean }): void;
  /** Yields queued values, then the end reason once; stops silently when `signal` aborts. */
  drain(signal: AbortSignal | undefined): AsyncGenerator<{ value: T } | { end: EndReason }>;
}

/**
 * The bridge from the bus's synchronous listener to a subscription's async generator, bounded
 * in bytes like the SSE endpoint's queue so a slow tRPC subscriber cannot grow memory either.
 */
export function createSubscriptionInbox<T>(maxQueuedBytes: number): SubscriptionInbox<T> {
  const entries: Array<InboxEntry<T>> = [];
  let queuedBytes = 0;
  let endReason: EndReason | null = null;
  let wake: (() => void) | null = null;

  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };

  const end = (reason: EndReason, { discardBacklog }: { discardBacklog: boolean }) => {
    if (endReason !== null) return;
    endReason = reason;
    if (discardBacklog) {
      entries.length = 0;
      queuedBytes = 0;
    }
    notify();
  };

  const waitForChange = (signal: AbortSignal | undefined) =>
    new Promise<void>((resolve) => {
      const onAbort = () => resolve();
      wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });

  return {
    push(entry) {
      if (endReason !== null) return;
      if (queuedBytes + entry.bytes > maxQueuedBytes) {
        end("slow_consumer", { discardBacklog: true });
        return;
      }
      entries.push(entry);
      queuedBytes += entry.bytes;
      notify();
    },
    end,
    async *drain(signal) {
      while (signal?.aborted !== true) {
        const entry = entries.shift();
        if (entry !== undefined) {
          queuedBytes -= entry.bytes;
          yield { value: entry.value };
        } else if (endReason !== null) {
          yield { end: endReason };
          return;
        } else {
          await waitForChange(signal);
        }
      }
    },
  };
}
