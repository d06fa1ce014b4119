/** The whole conformance suite on core's memory store (the engine's unit-test fake). */
import { createMemoryStore } from "@promptrun/core/testing";
import { describeStoreConformance } from "./store-conformance.ts";

describeStoreConformance("memory", async ({ clock }) => {
  const store = createMemoryStore({ clock });
  return { ...store, storedWebhookSecret: async (id) => store.storedWebhookSecret(id) };
});
