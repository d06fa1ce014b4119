/**
 * Workflow runs as both SQL stores keep them (docs/WORKFLOWS.md "Storage"): one row per run, its
 * steps a JSON array whose times are ISO text, and the dialect-independent rules of reading and
 * changing that row.
 */
import {
  type IdempotencyRecord,
  PromptrunError,
  type WorkflowRunChange,
  type WorkflowRunListFilter,
  type WorkflowRunRecord,
  type WorkflowStepRecord,
} from "@promptrun/core";
import { type AnyColumn, and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import { pageFrom } from "./cursor.ts";
import { pickColumns } from "./pick-columns.ts";
import { runsBeforeCursor } from "./run-rules.ts";

/** A step as its JSON holds it: the times as ISO text. */
export type StoredWorkflowStep = Omit<WorkflowStepRecord, "startedAt" | "finishedAt"> & {
  startedAt: string | null;
  finishedAt: string | null;
};

const isoOrNull = (date: Date | null): string | null => (date === null ? null : date.toISOString());
const dateOrNull = (iso: string | null): Date | null => (iso === null ? null : new Date(iso));

export const toStoredSteps = (steps: readonly WorkflowStepRecord[]): StoredWorkflowStep[] =>
  steps.map((step) => ({
    ...step,
    startedAt: isoOrNull(step.startedAt),
    finishedAt: isoOrNull(step.finishedAt),
  }));

/** A workflow_runs row as both stores select it: the record with its steps still as stored. */
export type StoredWorkflowRunRow = Omit<WorkflowRunRecord, "steps"> & { steps: StoredWorkflowStep[] };

export const toWorkflowRunRecord = ({ steps, ...row }: StoredWorkflowRunRow): WorkflowRunRecord => ({
  ...row,
  steps: steps.map((step) => ({
    ...step,
    startedAt: dateOrNull(step.startedAt),
    finishedAt: dateOrNull(step.finishedAt),
  })),
});

/** The columns a new workflow run's row gets beyond the NewWorkflowRun: pending, nothing yet. */
export const NEW_WORKFLOW_RUN_STATE = {
  status: "pending",
  startedAt: null,
  finishedAt: null,
  output: null,
  outputJson: null,
  error: null,
  tokenUsage: null,
  cost: null,
  revision: 0,
} as const;

/**
 * What one advance writes to the workflow run's row (the revision is bumped by the dialect's
 * statement): the steps, the first start, and an end with its secrets erased.
 */
export const advancedRunChanges = (change: WorkflowRunChange) => ({
  steps: toStoredSteps(change.steps),
  ...(change.startedAt === undefined ? {} : { startedAt: change.startedAt }),
  ...(change.end === undefined
    ? {}
    : {
        status: change.end.status,
        output: change.end.output,
        outputJson: change.end.outputJson ?? null,
        error: change.end.error,
        tokenUsage: change.end.tokenUsage,
        cost: change.end.cost,
        finishedAt: change.end.finishedAt,
        encryptedEnvVars: null,
      }),
});

/** The columns of a workflow_runs table (either dialect) that the list reads. */
interface WorkflowRunListColumns {
  id: AnyColumn;
  tenantId: AnyColumn;
  workflowSlug: AnyColumn;
  workflowVersion: AnyColumn;
  status: AnyColumn;
  threadId: AnyColumn;
  environment: AnyColumn;
  createdAt: AnyColumn;
}

/** A tenant's workflow runs narrowed by the list filter, after the page's cursor (newest first). */
export const workflowRunListCondition = (
  table: WorkflowRunListColumns,
  tenantId: string,
  filter: WorkflowRunListFilter,
  cursor: string | null | undefined,
): SQL | undefined =>
  and(
    eq(table.tenantId, tenantId),
    filter.slug === undefined ? undefined : eq(table.workflowSlug, filter.slug),
    filter.version === undefined ? undefined : eq(table.workflowVersion, filter.version),
    filter.status === undefined ? undefined : eq(table.status, filter.status),
    filter.threadId === undefined ? undefined : eq(table.threadId, filter.threadId),
    filter.environment === undefined ? undefined : eq(table.environment, filter.environment),
    filter.createdAfter === undefined ? undefined : gte(table.createdAt, filter.createdAfter),
    filter.createdBefore === undefined ? undefined : lt(table.createdAt, filter.createdBefore),
    cursor ? runsBeforeCursor(table, cursor) : undefined,
  );

/** A page of workflow runs from a `limit + 1` result, with the (createdAt, id) cursor of its last. */
export const workflowRunPage = (rows: StoredWorkflowRunRow[], limit: number) =>
  pageFrom(rows.map(toWorkflowRunRecord), limit, (run) => [run.createdAt.getTime(), run.id]);

interface WorkflowVersionColumns {
  id: AnyColumn;
  workflowId: AnyColumn;
  tenantId: AnyColumn;
  version: AnyColumn;
  definition: AnyColumn;
  contentHash: AnyColumn;
  createdAt: AnyColumn;
}

/** A WorkflowVersionRecord's select: the version's columns plus its workflow's slug (joined). */
export const workflowVersionColumns = <V extends WorkflowVersionColumns, W extends { slug: AnyColumn }>(
  versions: V,
  workflows: W,
): Pick<V, "id" | "workflowId" | "tenantId" | "version" | "definition" | "contentHash" | "createdAt"> & {
  slug: W["slug"];
} => ({
  // The record's key order: the slug follows the tenant.
  ...pickColumns(versions, ["id", "workflowId", "tenantId"] as const),
  slug: workflows.slug,
  ...pickColumns(versions, ["version", "definition", "contentHash", "createdAt"] as const),
});

interface IdempotencyColumns {
  tenantId: AnyColumn;
  key: AnyColumn;
  requestHash: AnyColumn;
  runId: AnyColumn;
  threadId: AnyColumn;
  createdAt: AnyColumn;
}

/**
 * The upsert that takes an Idempotency-Key for a workflow run: an existing record created before
 * `expiredBefore` is replaced; any other holds the key (nothing is returned, a conflict).
 */
export const idempotencyTakeover = <T extends IdempotencyColumns>(
  table: T,
  record: IdempotencyRecord,
  expiredBefore: Date | undefined,
) => ({
  target: [table.tenantId, table.key] as [T["tenantId"], T["key"]],
  set: {
    requestHash: record.requestHash,
    runId: record.runId,
    threadId: record.threadId,
    createdAt: record.createdAt,
  },
  // Without an expiry no record is replaced.
  setWhere: expiredBefore === undefined ? sql`false` : lt(table.createdAt, expiredBefore),
});

export const idempotencyConflict = () =>
  new PromptrunError("conflict", "the Idempotency-Key is already used by another workflow run");
