import { type IdempotencyRecord, type NewRun, PromptrunError } from "@promptrun/core";
import { type SQL, sql } from "drizzle-orm";
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

// Whole columns travel as one array parameter each and `unnest` turns them back into rows: a
// batch of any size is one short statement (one cached prepared statement), parsed and bound in
// a fraction of the time 16 parameters per row take. Timestamps go as text: the drizzle driver
// passes Date-typed parameters through unserialized, which breaks timestamptz[] ones.
const texts = (values: (string | null)[]): SQL => sql`${sql.param(values)}::text[]`;
const integers = (values: number[]): SQL => sql`${sql.param(values)}::int[]`;
const timestamps = (values: Date[]): SQL =>
  sql`${sql.param(values.map((value) => value.toISOString()))}::text[]::timestamptz[]`;

const threadKey = (tenantId: string, threadId: string): string => `${tenantId}\u0000${threadId}`;
const claimKey = (tenantId: string, key: string, runId: string): string =>
  `${tenantId}\u0000${key}\u0000${runId}`;
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const succeeded: WriteOutcome<undefined> = { ok: true, value: undefined };
const keyTaken = () => new PromptrunError("conflict", "the Idempotency-Key is already used by another run");

const insertThreads = async (tx: PostgresTransaction, batch: RunInsert[]) => {
  const rows = new Map<string, NewRun>();
  for (const { run } of batch) {
    const key = threadKey(run.tenantId, run.threadId);
    if (!rows.has(key)) rows.set(key, run);
  }
  // Sorted, so concurrent batches take the row locks in one order and cannot deadlock.
  const ordered = [...rows.entries()].sort(([a], [b]) => byText(a, b)).map(([, run]) => run);
  return tx.execute<{ tenant_id: string; id: string }>(sql`
    INSERT INTO threads (tenant_id, id, created_at)
    SELECT * FROM unnest(
      ${texts(ordered.map((run) => run.tenantId))},
      ${texts(ordered.map((run) => run.threadId))},
      ${timestamps(ordered.map((run) => run.createdAt))})
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, id`);
};

/**
 * The runs rows of creates, in the open transaction (their threads exist): the one insert of
 * every run, a workflow's step runs included (docs/WORKFLOWS.md "Storage").
 */
export const insertRunRows = async (tx: PostgresTransaction, runs: readonly NewRun[]): Promise<void> => {
  const column = <T>(pick: (run: NewRun) => T): T[] => runs.map(pick);
  await tx.execute(sql`
    INSERT INTO runs (id, tenant_id, thread_id, channel, prompt_id, prompt_version_id, prompt_slug,
      prompt_version, priority, environment, status, inputs, metadata, encrypted_env_vars, created_at, attempts,
      workflow_run_id, workflow_step)
    SELECT id, tenant_id, thread_id, channel, prompt_id, prompt_version_id, prompt_slug,
      prompt_version, priority, environment, 'pending', inputs::json, metadata::json, encrypted_env_vars,
      created_at, 0, workflow_run_id, workflow_step
    FROM unnest(
      ${texts(column((run) => run.id))},
      ${texts(column((run) => run.tenantId))},
      ${texts(column((run) => run.threadId))},
      ${texts(column((run) => run.channel))},
      ${texts(column((run) => run.promptId))},
      ${texts(column((run) => run.promptVersionId))},
      ${texts(column((run) => run.promptSlug))},
      ${integers(column((run) => run.promptVersion))},
      ${texts(column((run) => run.priority))},
      ${texts(column((run) => run.environment))},
      ${texts(column((run) => JSON.stringify(run.inputs)))},
      ${texts(column((run) => JSON.stringify(run.metadata)))},
      ${texts(column((run) => run.encryptedEnvVars ?? null))},
      ${timestamps(column((run) => run.createdAt))},
      ${texts(column((run) => run.workflowRun?.id ?? null))},
      ${texts(column((run) => run.workflowRun?.step ?? null))})
    AS input (id, tenant_id, thread_id, channel, prompt_id, prompt_version_id, prompt_slug,
      prompt_version, priority, environment, inputs, metadata, encrypted_env_vars, created_at,
      workflow_run_id, workflow_step)`);
};

/** Deletes the expired records of the keys about to be claimed, so the claim can take them. */
const deleteExpiredKeys = async (tx: PostgresTransaction, claims: Claim[]): Promise<void> => {
  const expiring = claims.filter((claim) => claim.expiredBefore !== undefined);
  if (expiring.length === 0) return;
  await tx.execute(sql`
    DELETE FROM idempotency_keys AS existing
    USING unnest(
      ${texts(expiring.map((claim) => claim.record.tenantId))},
      ${texts(expiring.map((claim) => claim.record.key))},
      ${timestamps(expiring.map((claim) => claim.expiredBefore ?? claim.record.createdAt))})
    AS claim (tenant_id, key, expired_before)
    WHERE existing.tenant_id = claim.tenant_id AND existing.key = claim.key
      AND existing.created_at < claim.expired_before`);
};

/** Claims the keys; returns the claims that got theirs. Of two claims of one key, the earlier wins. */
const claimKeys = async (tx: PostgresTransaction, claims: Claim[]): Promise<Set<string>> => {
  // A stable sort: the lock order is fixed and duplicates keep their submission order.
  const ordered = [...claims]
    .map((claim) => claim.record)
    .sort((a, b) => byText(a.tenantId, b.tenantId) || byText(a.key, b.key));
  const claimed = await tx.execute<{ tenant_id: string; key: string; run_id: string }>(sql`
    INSERT INTO idempotency_keys (tenant_id, key, request_hash, run_id, thread_id, created_at)
    SELECT * FROM unnest(
      ${texts(ordered.map((record) => record.tenantId))},
      ${texts(ordered.map((record) => record.key))},
      ${texts(ordered.map((record) => record.requestHash))},
      ${texts(ordered.map((record) => record.runId))},
      ${texts(ordered.map((record) => record.threadId))},
      ${timestamps(ordered.map((record) => record.createdAt))})
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, key, run_id`);
  return new Set(claimed.map((row) => claimKey(row.tenant_id, row.key, row.run_id)));
};

interface Claim {
  runId: string;
  record: IdempotencyRecord;
  expiredBefore: Date | undefined;
}

/**
 * Takes one idempotency key in the open transaction, as a create does (an expired record is
 * replaced, a fresh one holds the key); rejects with a conflict when the key is taken, which
 * rolls the caller's transaction back.
 */
export const claimIdempotencyKey = async (
  tx: PostgresTransaction,
  record: IdempotencyRecord,
  expiredBefore: Date | undefined,
): Promise<void> => {
  const claims = [{ runId: record.runId, record, expiredBefore }];
  await deleteExpiredKeys(tx, claims);
  const won = await claimKeys(tx, claims);
  if (!won.has(claimKey(record.tenantId, record.key, record.runId))) throw keyTaken();
};

/**
 * Inserts a batch in the open transaction with a fixed number of statements, whatever its size:
 * threads, runs, then idempotency keys (ON CONFLICT DO NOTHING). A run whose key was taken is
 * deleted again, with the thread it alone created, and reported as a conflict; the others stand.
 */
const insertBatch = async (
  tx: PostgresTransaction,
  batch: RunInsert[],
): Promise<WriteOutcome<undefined>[]> => {
  const createdThreads = await insertThreads(tx, batch);
  await insertRunRows(
    tx,
    batch.map((insert) => insert.run),
  );
  const claims: Claim[] = batch.flatMap(({ run, idempotency, idempotencyExpiredBefore }) =>
    idempotency ? [{ runId: run.id, record: idempotency, expiredBefore: idempotencyExpiredBefore }] : [],
  );
  if (claims.length === 0) return batch.map(() => succeeded);

  await deleteExpiredKeys(tx, claims);
  const won = await claimKeys(tx, claims);
  const lost = new Set(
    claims
      .filter(({ record }) => !won.has(claimKey(record.tenantId, record.key, record.runId)))
      .map((claim) => claim.runId),
  );
  if (lost.size === 0) return batch.map(() => succeeded);

  await tx.execute(sql`DELETE FROM runs WHERE id = ANY(${texts([...lost])})`);
  const stillUsed = new Set(
    batch.filter(({ run }) => !lost.has(run.id)).map(({ run }) => threadKey(run.tenantId, run.threadId)),
  );
  const orphans = createdThreads.filter((thread) => !stillUsed.has(threadKey(thread.tenant_id, thread.id)));
  if (orphans.length > 0) {
    await tx.execute(sql`
      DELETE FROM threads
      WHERE (tenant_id, id) IN (SELECT * FROM unnest(
        ${texts(orphans.map((thread) => thread.tenant_id))},
        ${texts(orphans.map((thread) => thread.id))}))`);
  }
  return batch.map(({ run }) => (lost.has(run.id) ? { ok: false, error: keyTaken() } : succeeded));
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
      outcomes.push(outcome ?? succeeded);
    } catch (error) {
      outcomes.push({ ok: false, error: constraintError("run", error) });
    }
  }
  return outcomes;
};
