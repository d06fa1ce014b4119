export {
  createInMemoryThreadEventBus,
  type InMemoryThreadEventBus,
  type InMemoryThreadEventBusOptions,
} from "./in-memory-thread-event-bus.ts";
