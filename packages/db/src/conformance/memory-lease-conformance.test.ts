/** The lease part of the conformance suite on core's memory store (the engine's unit-test fake). */
import { afterEach, beforeEach, describe } from "bun:test";
import type { Store } from "@promptrun/core";
import { createMemoryStore } from "@promptrun/core/testing";
import { leaseConformance } from "./lease-conformance.ts";

describe("memory store leases", () => {
  let store: Store | null = null;
  beforeEach(() => {
    store = createMemoryStore();
  });
  afterEach(async () => {
    await store?.close();
    store = null;
  });
  leaseConformance(() => {
    if (!store) throw new Error("no store outside a test");
    return store;
  });
});
