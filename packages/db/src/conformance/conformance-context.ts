import type { Store } from "@promptrun/core";
import type { ManualClock } from "@promptrun/core/testing";
import type { KnowledgeAtRest } from "./knowledge-fixtures.ts";

/** What each part of the conformance suite sees: the current test's fresh store and its clock. */
export interface ConformanceContext {
  /** The store opened for the running test (empty). */
  store(): Store;
  /** The clock the store was opened with; each test starts it at the same instant. */
  clock: ManualClock;
  /** The webhook's encrypted secret as stored, deleted rows included (null: no such row). */
  storedWebhookSecret(id: string): Promise<string | null>;
  /** Row counts of the knowledge tables and uploads kept (null: the store cannot tell). */
  knowledgeAtRest(): Promise<KnowledgeAtRest | null>;
}
