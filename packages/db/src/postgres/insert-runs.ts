import { type IdempotencyRecord, type NewRun, PromptrunError } from "@promptrun/core";
import { and, eq, inArray, or, sql } from "drizzle-orm";
import { idempotencyKeys, runs, threads } from "../schema/postgres.ts";
import type { WriteOutcome } from "./group-commit.ts";
import type { PostgresDatabase, PostgresTransaction } from "./postgres-context.ts";
import { constraintError, sqlState } from "./postgres-errors.ts";

/** One `runs.create` call. */
export interface RunInsert {
  run: NewRun;
  idempotency?: IdempotencyRecord;
  /** An existing record of the key created before this has expired and is replaced. */
  idempotencyExpiredBefore?: Date;
}

const threadKey = (tenantId: string, threadId: string): string => `${tenantId}\u0000${threadId}`;
const claimKey = (record: Pick<IdempotencyRecord, "tenantId" | "key" | "runId">): string =>
  `${record.tenantId}\u0000${record.key}\u0000${record.runId}`;
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const keyTaken = () => new PromptrunError("conflict", "the Idempotency-Key is already used by another run");

/**
 * Inserts a batch in the open transaction with a fixed number of statements, whatever its size:
 * threads, runs, then idempotency keys (ON CONFLICT DO NOTHING). A run whose key was taken is
 * deleted again, with the thread it alone created, and reported as a conflict; the others stand.
 * Rows are written in a fixed order (sorted keys) so concurrent batches cannot deadlock on them.
 */
const insertBatch = async (
  tx: PostgresTransaction,
  batch: RunInsert[],
): Promise<WriteOutcome<undefined>[]> => {
  const threadRows = new Map<string, { tenantId: string; id: string; createdAt: Date }>();
  for (const { run } of batch) {
    const key = threadKey(run.tenantId, run.threadId);
    if (!threadRows.has(key))
      threadRows.set(key, { tenantId: run.tenantId, id: run.threadId, createdAt: run.createdAt });
  }
  const createdThreads = await tx
    .insert(threads)
    .values([...threadRows.entries()].sort(([a], [b]) => byText(a, b)).map(([, row]) => row))
    .onConflictDoNothing()
    .returning({ tenantId: threads.tenantId, id: threads.id });
  await tx.insert(runs).values(
    batch.map(({ run }) => ({
      ...run,
      encryptedEnvVars: run.encryptedEnvVars ?? null,
      status: "pending" as const,
      attempts: 0,
    })),
  );

  const claims = batch.flatMap((insert) =>
    insert.idempotency ? [{ ...insert, idempotency: insert.idempotency }] : [],
  );
  if (claims.length === 0) return batch.map(() => ({ ok: true, value: undefined }));

  const expiring = claims.filter((claim) => claim.idempotencyExpiredBefore !== undefined);
  if (expiring.length > 0) {
    const values = sql.join(
      expiring.map(
        ({ idempotency, idempotencyExpiredBefore }) =>
          sql`(${idempotency.tenantId}, ${idempotency.key}, ${idempotencyExpiredBefore?.toISOString()}::timestamptz)`,
      ),
      sql`, `,
    );
    await tx.execute(sql`
      DELETE FROM ${idempotencyKeys} AS existing
      USING (VALUES ${values}) AS claim (tenant_id, key, expired_before)
      WHERE existing.tenant_id = claim.tenant_id AND existing.key = claim.key
        AND existing.created_at < claim.expired_before`);
  }
  // A stable sort: of two claims of one key in this batch, the earlier one wins.
  const ordered = [...claims].sort(
    (a, b) =>
      byText(a.idempotency.tenantId, b.idempotency.tenantId) || byText(a.idempotency.key, b.idempotency.key),
  );
  const claimed = await tx
    .insert(idempotencyKeys)
    .values(ordered.map((claim) => claim.idempotency))
    .onConflictDoNothing()
    .returning({
      tenantId: idempotencyKeys.tenantId,
      key: idempotencyKeys.key,
      runId: idempotencyKeys.runId,
    });
  const won = new Set(claimed.map(claimKey));
  const lost = new Set(
    claims.filter((claim) => !won.has(claimKey(claim.idempotency))).map((claim) => claim.run.id),
  );
  if (lost.size === 0) return batch.map(() => ({ ok: true, value: undefined }));

  await tx.delete(runs).where(inArray(runs.id, [...lost]));
  const stillUsed = new Set(
    batch.filter(({ run }) => !lost.has(run.id)).map(({ run }) => threadKey(run.tenantId, run.threadId)),
  );
  const orphans = createdThreads.filter((thread) => !stillUsed.has(threadKey(thread.tenantId, thread.id)));
  if (orphans.length > 0) {
    await tx
      .delete(threads)
      .where(
        or(...orphans.map((thread) => and(eq(threads.tenantId, thread.tenantId), eq(threads.id, thread.id)))),
      );
  }
  return batch.map(({ run }) =>
    lost.has(run.id) ? { ok: false, error: keyTaken() } : { ok: true, value: undefined },
  );
};

/** Errors raised by a statement of the batch (constraint, deadlock), not by a lost connection. */
const isStatementError = (error: unknown): boolean => {
  const code = sqlState(error);
  return code !== undefined && (code.startsWith("23") || code.startsWith("40"));
};

/**
 * Commits a batch of creates in one transaction. If a statement fails (a duplicate run id, a
 * missing prompt version, a deadlock), nothing of the batch was written: each create is then
 * retried alone, in order, so only the faulty one rejects.
 */
export const insertRuns = async (
  db: PostgresDatabase,
  batch: RunInsert[],
): Promise<WriteOutcome<undefined>[]> => {
  try {
    return await db.transaction((tx) => insertBatch(tx, batch));
  } catch (error) {
    if (batch.length === 1 || !isStatementError(error)) throw constraintError("run", error);
  }
  const outcomes: WriteOutcome<undefined>[] = [];
  for (const insert of batch) {
    try {
      const [outcome] = await db.transaction((tx) => insertBatch(tx, [insert]));
      outcomes.push(outcome ?? { ok: true, value: undefined });
    } catch (error) {
      outcomes.push({ ok: false, error: constraintError("run", error) });
    }
  }
  return outcomes;
};
