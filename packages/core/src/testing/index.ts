export { createEngineFixture } from "../engine/engine-test-fixture.ts";
export { pendingRunRecord } from "../run-record.ts";
export {
  hangUntilAborted,
  type LocalServer,
  startHttpServer,
  startMcpServer,
} from "../tools/tools-test-fixture.ts";
export { type ManualClock, manualClock } from "./clock.ts";
export * from "./fake-providers/index.ts";
export { createMemoryStore } from "./memory-store.ts";
export { recordingEngine } from "./recording-engine.ts";
export { rejection } from "./rejection.ts";
export {
  addTenant,
  at,
  definitionOf,
  idempotencyFor,
  newRun,
  push,
  pushPrompt,
  stateOf,
} from "./store-fixtures.ts";
export { createTestConfig, TEST_SECRET } from "./test-config.ts";
export { waitFor } from "./wait-for.ts";
