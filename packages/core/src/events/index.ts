export {
  createInMemoryThreadEventBus,
  type InMemoryThreadEventBus,
  type InMemoryThreadEventBusOptions,
} from "./in-memory-thread-event-bus.ts";
export {
  createThreadEventHub,
  parseEventId,
  type ThreadEventHub,
  type ThreadEventHubOptions,
} from "./thread-event-hub.ts";
