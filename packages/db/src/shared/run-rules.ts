import type { LeaseRenewal, RunCompletion, RunFailure, RunListFilter } from "@promptrun/core";
import { type AnyColumn, and, eq, lt, or, type SQL, sql, type Table } from "drizzle-orm";
import { decodeCursor } from "./cursor.ts";

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

/** Newest first: the runs after a (createdAt desc, id desc) cursor. */
export const runsBeforeCursor = (runs: RunColumns, cursor: string): SQL | undefined => {
  const [createdAtMs, id] = decodeCursor(cursor, ["number", "string"]);
  const createdAt = new Date(createdAtMs);
  return or(lt(runs.createdAt, createdAt), and(eq(runs.createdAt, createdAt), lt(runs.id, id)));
};

/** A tenant's runs narrowed by the list filter, after the page's cursor. */
export const runListCondition = (
  runs: RunColumns,
  tenantId: string,
  filter: RunListFilter,
  cursor: string | null | undefined,
): SQL | undefined =>
  and(
    eq(runs.tenantId, tenantId),
    filter.threadId === undefined ? undefined : eq(runs.threadId, filter.threadId),
    filter.channel === undefined ? undefined : eq(runs.channel, filter.channel),
    filter.slug === undefined ? undefined : eq(runs.promptSlug, filter.slug),
    filter.status === undefined ? undefined : eq(runs.status, filter.status),
    cursor ? runsBeforeCursor(runs, cursor) : undefined,
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

/** What completing a run writes to its row: the outcome, and its secrets and lease let go. */
export const completedRunChanges = (completion: RunCompletion) => ({
  status: "completed" as const,
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

/** What failing a run writes to its row: the outcome, and its secrets and lease let go. */
export const failedRunChanges = (failure: RunFailure) => ({
  status: "failed" as const,
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
