import type { ThreadEventBus } from "@promptrun/core";

export interface CountingBus extends ThreadEventBus {
  /** Subscriptions not yet unsubscribed. */
  activeSubscriptions(): number;
}

/** Wraps a bus to count live subscriptions (tests assert that every subscriber lets go). */
export function countingBus(bus: ThreadEventBus): CountingBus {
  let active = 0;
  return {
    publish: (tenantId, threadId, event) => bus.publish(tenantId, threadId, event),
    subscribe(tenantId, threadId, listener, options) {
      const subscription = bus.subscribe(tenantId, threadId, listener, options);
      active++;
      let subscribed = true;
      return {
        replay: subscription.replay,
        position: subscription.position,
        unsubscribe() {
          if (subscribed) {
            subscribed = false;
            active--;
          }
          subscription.unsubscribe();
        },
      };
    },
    close: () => bus.close(),
    activeSubscriptions: () => active,
  };
}
