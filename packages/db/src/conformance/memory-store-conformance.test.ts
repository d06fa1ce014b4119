/** The whole conformance suite on core's memory store (the engine's unit-test fake). */
import { createMemoryStore } from "@promptrun/core/testing";
import { describeStoreConformance } from "./store-conformance.ts";

// The memory KnowledgeStore comes with the knowledge service's branch: until it is merged, the
// knowledge part of the suite is skipped here (it runs on SQLite and Postgres).
const hasKnowledge = "knowledge" in createMemoryStore();

describeStoreConformance(
  "memory",
  async ({ clock }) => {
    const store = createMemoryStore({ clock });
    return { ...store, storedWebhookSecret: async (id) => store.storedWebhookSecret(id) };
  },
  { knowledge: hasKnowledge, workflows: true },
);
