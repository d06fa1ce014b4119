/**
 * What workflows need from a store (docs/WORKFLOWS.md "Storage"). Definitions are versioned and
 * tagged like prompts. A workflow run is one row: its state, and its steps as a JSON array; every
 * change is a compare-and-set on `revision` (and status pending), so instances and restarts that
 * advance the same run never both win. A prompt step's run is inserted in the same transaction
 * that records its runId, so a step is started at most once.
 */
import type {
  Cost,
  Metadata,
  Page,
  Priority,
  TokenUsage,
  WorkflowDefinition,
  WorkflowRunStatus,
  WorkflowStepStatus,
} from "@promptrun/contract";
import type { IdempotencyRecord, NewRun, VersionSelector, WebhookDeliveryRecord } from "../ports.ts";

export interface WorkflowVersionRecord {
  id: string;
  workflowId: string;
  tenantId: string;
  slug: string;
  version: number;
  definition: WorkflowDefinition;
  /** SHA-256 of the canonical JSON of `definition`: an identical push creates nothing. */
  contentHash: string;
  createdAt: Date;
}

export interface WorkflowRecord {
  id: string;
  tenantId: string;
  slug: string;
  latestVersion: number;
  /** The latest version's description. */
  description: string | null;
  /** tag → version number */
  tags: Record<string, number>;
  createdAt: Date;
  updatedAt: Date;
}

/** One step's state as stored. A prompt step's output lives on its run (read through runId). */
export interface WorkflowStepRecord {
  id: string;
  status: WorkflowStepStatus;
  /** The prompt run of a started prompt step. */
  runId: string | null;
  /** A retrieve step's text and `{chunks}`; null for prompt steps (their run holds them). */
  output: string | null;
  outputJson: unknown;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface WorkflowRunRecord {
  id: string;
  tenantId: string;
  workflowId: string;
  workflowVersionId: string;
  workflowSlug: string;
  workflowVersion: number;
  threadId: string;
  priority: Priority;
  environment: string;
  inputs: Record<string, unknown>;
  metadata: Metadata;
  /** AES-256-GCM ciphertext of the run's envVars (given to every step); erased when it ends. */
  encryptedEnvVars: string | null;
  /** Step id → the prompt version id its reference resolved to when the run was created. */
  promptVersions: Record<string, string>;
  status: WorkflowRunStatus;
  createdAt: Date;
  /** When the first step started. */
  startedAt: Date | null;
  finishedAt: Date | null;
  output: string | null;
  outputJson: unknown;
  error: string | null;
  tokenUsage: TokenUsage | null;
  cost: Cost | null;
  /** Every step of the definition, in file order. */
  steps: WorkflowStepRecord[];
  /** Incremented by every change: the compare-and-set token of `advance`. */
  revision: number;
}

export type NewWorkflowRun = Omit<
  WorkflowRunRecord,
  | "status"
  | "startedAt"
  | "finishedAt"
  | "output"
  | "outputJson"
  | "error"
  | "tokenUsage"
  | "cost"
  | "revision"
>;

/** The end of a workflow run, written with its webhook outbox rows. */
export interface WorkflowRunEnd {
  status: "completed" | "failed";
  output: string | null;
  outputJson: unknown;
  error: string | null;
  tokenUsage: TokenUsage | null;
  cost: Cost | null;
  finishedAt: Date;
  deliveries: WebhookDeliveryRecord[];
}

/** One change of a pending workflow run, applied in one transaction. */
export interface WorkflowRunChange {
  /** The whole steps array after the change. */
  steps: WorkflowStepRecord[];
  /** Set once, when the first step starts. */
  startedAt?: Date | undefined;
  /** Prompt runs of the steps started by this change (each with `workflowRun` set), inserted in the same transaction. */
  newRuns: NewRun[];
  /** Ends the run (status, output…; envVars erased). */
  end?: WorkflowRunEnd | undefined;
}

export interface WorkflowRunListFilter {
  slug?: string;
  version?: number;
  status?: WorkflowRunStatus;
  threadId?: string;
  environment?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

export interface WorkflowStore {
  // ------------------------------------------------ definitions (as PromptStore)
  /**
   * Atomically: creates the workflow if new; if the newest version's contentHash equals the
   * given one, returns it with created=false; otherwise inserts version max+1. Then points `tags`
   * at the resulting version.
   */
  pushVersion(input: {
    tenantId: string;
    slug: string;
    definition: WorkflowDefinition;
    contentHash: string;
    tags: string[];
    newWorkflowId: string;
    newVersionId: string;
    at: Date;
  }): Promise<{ version: WorkflowVersionRecord; created: boolean; tags: string[] }>;
  /** Points the tag at the version; null when the workflow or version is unknown. */
  setTag(
    tenantId: string,
    slug: string,
    version: number,
    tag: string,
    at: Date,
  ): Promise<WorkflowVersionRecord | null>;
  resolveVersion(
    tenantId: string,
    slug: string,
    selector: VersionSelector,
  ): Promise<WorkflowVersionRecord | null>;
  /** Tags pointing at a version. */
  tagsOf(versionId: string): Promise<string[]>;
  getWorkflow(tenantId: string, slug: string): Promise<WorkflowRecord | null>;
  /** Slug order. */
  listWorkflows(
    tenantId: string,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<WorkflowRecord>>;
  /** Newest version first. */
  listVersions(
    tenantId: string,
    slug: string,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<WorkflowVersionRecord>>;

  // ------------------------------------------------ runs
  /**
   * Durably inserts the workflow run (and its thread if new) and, when given, the idempotency
   * record (its `runId` is the workflow run's id), in one transaction. Rejects with
   * PromptrunError("conflict") when the key was taken meanwhile; a record created before
   * `idempotencyExpiredBefore` is replaced.
   */
  createRun(
    run: NewWorkflowRun,
    idempotency?: IdempotencyRecord,
    options?: { idempotencyExpiredBefore?: Date },
  ): Promise<void>;
  findIdempotency(tenantId: string, key: string, notBefore: Date): Promise<IdempotencyRecord | null>;
  getRun(tenantId: string, id: string): Promise<WorkflowRunRecord | null>;
  getRunById(id: string): Promise<WorkflowRunRecord | null>;
  /** Newest first (createdAt, then id), keyset cursor; invalid cursor: PromptrunError("invalid"). */
  listRuns(
    tenantId: string,
    filter: WorkflowRunListFilter,
    page: { cursor?: string | null; limit: number },
  ): Promise<Page<WorkflowRunRecord>>;
  /** Ids of every pending workflow run, oldest first (recovery). */
  listPendingRunIds(): Promise<string[]>;
  /**
   * Applies `change` if the run is pending and its revision is `expectedRevision`: the steps,
   * startedAt, the new step runs, the end with its outbox rows, revision + 1 — one transaction.
   * false when the compare-and-set lost (nothing written).
   */
  advance(id: string, expectedRevision: number, change: WorkflowRunChange): Promise<boolean>;
  /**
   * Pending prompt runs whose workflow run has ended (left by a crash between a workflow's end and
   * its steps' cancel), oldest first, at most `limit`.
   */
  listOrphanedStepRuns(limit: number): Promise<string[]>;
}
