import type { Priority } from "@promptrun/contract";
import type { LeaseRenewal, PendingCursor, RunCompletion, RunFailure, RunListFilter } from "@promptrun/core";
import {
  type AnyColumn,
  and,
  eq,
  gt,
  gte,
  isNotNull,
  isNull,
  lt,
  lte,
  or,
  type SQL,
  sql,
  type Table,
} from "drizzle-orm";
import { decodeCursor } from "./cursor.ts";
import { NOT_PAUSED } from "./run-records.ts";

/** The columns of a runs table (either dialect) that these rules read. */
interface RunColumns {
  id: AnyColumn;
  tenantId: AnyColumn;
  threadId: AnyColumn;
  channel: AnyColumn;
  promptSlug: AnyColumn;
  status: AnyColumn;
  createdAt: AnyColumn;
}

/** The extra columns the list filters read. */
interface ListedRunColumns extends RunColumns {
  promptVersion: AnyColumn;
  environment: AnyColumn;
  startedAt: AnyColumn;
  metadata: AnyColumn;
  pausedStep: AnyColumn;
}

/** The dialect's test of one metadata filter: the key's value is the string or an array containing it. */
export type MetadataMatch = (metadata: AnyColumn, key: string, value: string) => SQL;

/** Newest first: the runs (prompt or workflow runs) after a (createdAt desc, id desc) cursor. */
export const runsBeforeCursor = (
  runs: Pick<RunColumns, "id" | "createdAt">,
  cursor: string,
): SQL | undefined => {
  const [createdAtMs, id] = decodeCursor(cursor, ["number", "string"]);
  const createdAt = new Date(createdAtMs);
  // The leading `createdAt <=` bound lets both databases seek the index to the cursor instead of
  // walking every newer entry (a deep page cost 15 ms at 250k runs of a tenant without it).
  return and(
    lte(runs.createdAt, createdAt),
    or(lt(runs.createdAt, createdAt), and(eq(runs.createdAt, createdAt), lt(runs.id, id))),
  );
};

/** A tenant's runs narrowed by the list filter, after the page's cursor. */
export const runListCondition = (
  runs: ListedRunColumns,
  tenantId: string,
  filter: RunListFilter,
  cursor: string | null | undefined,
  metadataMatch: MetadataMatch,
): SQL | undefined =>
  and(
    eq(runs.tenantId, tenantId),
    filter.threadId === undefined ? undefined : eq(runs.threadId, filter.threadId),
    filter.channel === undefined ? undefined : eq(runs.channel, filter.channel),
    filter.slug === undefined ? undefined : eq(runs.promptSlug, filter.slug),
    filter.version === undefined ? undefined : eq(runs.promptVersion, filter.version),
    filter.status === undefined ? undefined : eq(runs.status, filter.status),
    filter.phase === undefined ? undefined : phaseCondition(runs, filter.phase),
    filter.environment === undefined ? undefined : eq(runs.environment, filter.environment),
    filter.createdAfter === undefined ? undefined : gte(runs.createdAt, filter.createdAfter),
    filter.createdBefore === undefined ? undefined : lt(runs.createdAt, filter.createdBefore),
    ...Object.entries(filter.metadata ?? {}).map(([key, value]) => metadataMatch(runs.metadata, key, value)),
    cursor ? runsBeforeCursor(runs, cursor) : undefined,
  );

/**
 * A run's phase as the API shows it (core/src/services/to-prompt-run.ts): a paused run
 * requires action whether or not it started; the others are queued until an attempt starts them.
 */
const phaseCondition = (
  runs: ListedRunColumns,
  phase: NonNullable<RunListFilter["phase"]>,
): SQL | undefined =>
  and(
    eq(runs.status, "pending"),
    phase === "requires_action" ? isNotNull(runs.pausedStep) : isNull(runs.pausedStep),
    phase === "queued" ? isNull(runs.startedAt) : undefined,
    phase === "running" ? isNotNull(runs.startedAt) : undefined,
  );

/**
 * No pending run of the same channel was created before this one (it is its channel's head).
 * `earlier` is the dialect's alias of the runs table named "earlier".
 */
export const channelHeadCondition = (runs: Table & RunColumns, earlier: RunColumns): SQL => sql`not exists (
  select 1 from ${runs} as "earlier"
  where ${earlier.status} = 'pending' and ${earlier.tenantId} = ${runs.tenantId}
    and ${earlier.threadId} = ${runs.threadId} and ${earlier.channel} = ${runs.channel}
    and (${earlier.createdAt}, ${earlier.id}) < (${runs.createdAt}, ${runs.id}))`;

/**
 * The id of the pending run just before this one in its channel, or null (listPendingPage: the
 * engine loads a run into memory only once that one is there, docs/ARCHITECTURE.md).
 */
export const channelPredecessorSql = (runs: Table & RunColumns, earlier: RunColumns): SQL<string | null> => {
  // Spelled out with their tables: in a select list drizzle writes bare column names.
  const of = (table: string, column: AnyColumn) =>
    sql`${sql.identifier(table)}.${sql.identifier(column.name)}`;
  const [outer, inner] = [
    (column: AnyColumn) => of("runs", column),
    (column: AnyColumn) => of("earlier", column),
  ];
  return sql<string | null>`(
  select ${inner(earlier.id)} from ${runs} as "earlier"
  where ${inner(earlier.status)} = 'pending' and ${inner(earlier.tenantId)} = ${outer(runs.tenantId)}
    and ${inner(earlier.threadId)} = ${outer(runs.threadId)} and ${inner(earlier.channel)} = ${outer(runs.channel)}
    and (${inner(earlier.createdAt)}, ${inner(earlier.id)}) < (${outer(runs.createdAt)}, ${outer(runs.id)})
  order by ${inner(earlier.createdAt)} desc, ${inner(earlier.id)} desc limit 1)`;
};

/**
 * listPendingPage: the tenant's pending, not paused runs of one class after `after` (served by
 * runs_pending_idx; the leading `createdAt >=` bound seeks it to the cursor).
 */
export const pendingPageCondition = (
  runs: RunColumns & { priority: AnyColumn; pausedStep: AnyColumn },
  tenantId: string,
  priority: Priority,
  after: PendingCursor | null,
): SQL =>
  and(
    sql`${runs.status} = 'pending'`,
    eq(runs.tenantId, tenantId),
    eq(runs.priority, priority),
    isNull(runs.pausedStep),
    after ? gte(runs.createdAt, after.createdAt) : undefined,
    after
      ? or(
          gt(runs.createdAt, after.createdAt),
          and(eq(runs.createdAt, after.createdAt), gt(runs.id, after.id)),
        )
      : undefined,
  )!;

/** What completing a run writes to its row: the outcome and steps, and its secrets, lease and pause let go. */
export const completedRunChanges = (completion: RunCompletion) => ({
  status: "completed" as const,
  steps: completion.steps,
  // Retrieval absent keeps what is stored; citations absent are none.
  ...(completion.retrieval === undefined ? {} : { retrieval: completion.retrieval }),
  citations: completion.citations ?? [],
  ...NOT_PAUSED,
  output: completion.output,
  outputJson: completion.outputJson ?? null,
  finishReason: completion.finishReason ?? null,
  memoryWindow: completion.memoryWindow ?? null,
  tokenUsage: completion.tokenUsage,
  cost: completion.cost,
  error: null,
  finishedAt: completion.finishedAt,
  encryptedEnvVars: null,
  leaseOwner: null,
  leaseUntil: null,
});

/**
 * What failing a run writes to its row: the outcome (and the steps, when given), and its secrets,
 * lease and pause let go.
 */
export const failedRunChanges = (failure: RunFailure) => ({
  status: "failed" as const,
  ...(failure.steps === undefined ? {} : { steps: failure.steps }),
  ...(failure.retrieval === undefined ? {} : { retrieval: failure.retrieval }),
  ...NOT_PAUSED,
  error: failure.error,
  finishReason: failure.finishReason ?? null,
  memoryWindow: failure.memoryWindow ?? null,
  cost: failure.cost,
  finishedAt: failure.finishedAt,
  encryptedEnvVars: null,
  leaseOwner: null,
  leaseUntil: null,
});

/** The memory rows a completed run appends to its (tenant, thread, channel). */
export const completionMessages = (
  ended: { tenantId: string; threadId: string; channel: string },
  runId: string,
  completion: RunCompletion,
) =>
  completion.memory.map((message) => ({
    ...ended,
    runId,
    role: message.role,
    content: message.content,
    parts: message.parts ?? null,
    createdAt: completion.finishedAt,
  }));

/** The renewed leases, and which of those runs a cancel was requested for. */
export const leaseRenewalFrom = (
  rows: readonly { id: string; cancelRequestedAt: Date | null }[],
): LeaseRenewal => ({
  renewed: rows.map((row) => row.id),
  cancelRequested: rows.filter((row) => row.cancelRequestedAt !== null).map((row) => row.id),
});
