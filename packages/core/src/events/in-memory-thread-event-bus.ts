import type { Clock, ThreadEventBus } from "../ports.ts";
import { createThreadEventHub, type ThreadEventHub, type ThreadEventHubOptions } from "./thread-event-hub.ts";

export interface InMemoryThreadEventBusOptions extends Omit<ThreadEventHubOptions, "knownSince"> {
  replayBufferSeconds: number;
  clock: Clock;
}

/**
 * ThreadEventBus for one process: the hub's per-thread listeners and replay buffers, with ids
 * numbered here.
 */
export interface InMemoryThreadEventBus extends ThreadEventBus {
  /** Threads currently held (with buffered events or listeners): for metrics and tests. */
  threadCount(): number;
}

/** Ids are decimal strings of an integer ≥ publish time in µs: increasing, and later after a restart. */
const ID_UNITS_PER_MS = 1000;

export function createInMemoryThreadEventBus(options: InMemoryThreadEventBusOptions): InMemoryThreadEventBus {
  const { clock } = options;
  let lastSequence = clock.now().getTime() * ID_UNITS_PER_MS;
  // Ids up to the creation time came from an earlier process (or bus) whose buffer is gone.
  const hub: ThreadEventHub = createThreadEventHub({ ...options, knownSince: lastSequence });

  const nextSequence = (now: number): number => {
    lastSequence = Math.max(lastSequence + 1, now * ID_UNITS_PER_MS);
    return lastSequence;
  };

  return {
    publish(tenantId, threadId, event) {
      hub.deliver(tenantId, threadId, nextSequence(clock.now().getTime()), event);
    },
    subscribe: (tenantId, threadId, listener, subscribeOptions) =>
      hub.subscribe(tenantId, threadId, listener, subscribeOptions),
    threadCount: () => hub.threadCount(),
    async close() {
      hub.close();
    },
  };
}
