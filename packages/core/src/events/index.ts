export { createInMemoryThreadEventBus } from "./in-memory-thread-event-bus.ts";
export { createThreadEventHub } from "./thread-event-hub.ts";
