/**
 * One behaviour suite for every Store implementation (SQLite, Postgres): what the engine may rely
 * on, written against the Store port (plus one look at secrets at rest). A store's test file calls
 * describeStoreConformance with a function opening a fresh, empty store; each test gets its own.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Clock, Store } from "@promptrun/core";
import { addTenant, at, manualClock, newRun, pushPrompt } from "@promptrun/core/testing";
import type { ConformanceContext } from "./conformance-context.ts";
import { consoleSessionConformance } from "./console-session-conformance.ts";
import { environmentConformance } from "./environment-conformance.ts";
import { knowledgeConformance } from "./knowledge-conformance.ts";
import type { KnowledgeAtRest } from "./knowledge-fixtures.ts";
import { leaseConformance } from "./lease-conformance.ts";
import { promptConformance } from "./prompt-conformance.ts";
import { promptOutboxConformance } from "./prompt-outbox-conformance.ts";
import { runConformance } from "./run-conformance.ts";
import { runHistoryConformance } from "./run-history-conformance.ts";
import { runListConformance } from "./run-list-conformance.ts";
import { runPauseConformance } from "./run-pause-conformance.ts";
import { runRetrievalConformance } from "./run-retrieval-conformance.ts";
import { tenantConformance } from "./tenant-conformance.ts";
import { webhookConformance } from "./webhook-conformance.ts";
import { workflowConformance } from "./workflow-conformance.ts";

/** A store under test, with a look at what it keeps at rest that the port does not show. */
export type ConformanceStore = Store & {
  close(): Promise<void>;
  /** The webhook's encrypted secret as stored, deleted rows included (null: no such row). */
  storedWebhookSecret(id: string): Promise<string | null>;
  /** Row counts of the knowledge tables and uploads kept (SQL stores). */
  knowledgeAtRest?(): Promise<KnowledgeAtRest>;
};

/** Opens an empty store using `clock`; its `close` also disposes of whatever the test created. */
export type OpenConformanceStore = (options: { clock: Clock }) => Promise<ConformanceStore>;

const START = at(100_000);

export interface ConformanceOptions {
  /** false: the store has no `knowledge` part yet, so the knowledge suite is skipped. */
  knowledge?: boolean;
  /**
   * true: the workflow suite runs too. Opt-in while the memory store's WorkflowStore is being
   * written (its test turns it on); the SQL stores' tests pass it.
   */
  workflows?: boolean;
}

export const describeStoreConformance = (
  name: string,
  openStore: OpenConformanceStore,
  options: ConformanceOptions = {},
): void => {
  describe(`${name} store conformance`, () => {
    let current: ConformanceStore | null = null;
    const clock = manualClock(START);
    const context: ConformanceContext = {
      store: () => {
        if (!current) throw new Error("no store is open outside a test");
        return current;
      },
      clock,
      storedWebhookSecret: (id) => {
        if (!current) throw new Error("no store is open outside a test");
        return current.storedWebhookSecret(id);
      },
      knowledgeAtRest: async () => (await current?.knowledgeAtRest?.()) ?? null,
    };

    beforeEach(async () => {
      clock.set(START);
      current = await openStore({ clock });
    });
    afterEach(async () => {
      await current?.close();
      current = null;
    });

    describe("tenants", () => tenantConformance(context));
    describe("prompts", () => promptConformance(context));
    describe("prompt webhook outbox", () => promptOutboxConformance(context));
    describe("runs", () => runConformance(context));
    describe("run history", () => runHistoryConformance(context));
    describe("run lists and usage", () => runListConformance(context));
    describe("run steps and pauses", () => runPauseConformance(context));
    describe("run retrieval and citations", () => runRetrievalConformance(context));
    describe("environments", () => environmentConformance(context));
    describe("webhooks", () => webhookConformance(context));
    describe("leases", () => leaseConformance(context.store));
    describe("console sessions", () => consoleSessionConformance(context));
    describe.skipIf(options.knowledge === false)("knowledge bases", () => knowledgeConformance(context));
    describe.skipIf(options.workflows !== true)("workflows", () => workflowConformance(context));

    test("close is idempotent; later creates are refused as unavailable", async () => {
      const store = context.store();
      const tenant = await addTenant(store);
      const version = await pushPrompt(store, tenant.id);
      await store.close();
      await store.close();
      await expect(store.runs.create(newRun(version))).rejects.toMatchObject({ code: "unavailable" });
      await expect(store.tenants.get(tenant.id)).rejects.toThrow();
    });
  });
};
