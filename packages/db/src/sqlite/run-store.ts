import type { Database } from "bun:sqlite";
import type { MemoryPart } from "@promptrun/contract";
import {
  DEFAULT_MEMORY_BOUND,
  type IdempotencyRecord,
  knownTotal,
  type MemoryRowSize,
  memoryWindowOf,
  type NewRun,
  PromptrunError,
  type RunRecord,
  type RunStore,
  type WebhookDeliveryRecord,
} from "@promptrun/core";
import {
  and,
  asc,
  count,
  eq,
  getTableColumns,
  gte,
  inArray,
  isNotNull,
  isNull,
  lte,
  or,
  sql,
} from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { alias } from "drizzle-orm/sqlite-core";
import { recordColumns } from "../schema/record-columns.ts";
import {
  idempotencyKeys,
  messages,
  runs,
  threads,
  webhookDeliveries,
  webhookEvents,
  webhookPayloads,
} from "../schema/sqlite.ts";
import { pageFrom } from "../shared/cursor.ts";
import { pausedRunChanges, resumedRunChanges, toRunRecord } from "../shared/run-records.ts";
import {
  channelHeadCondition,
  channelPredecessorSql,
  leaseRenewalFrom,
  pendingPageCondition,
  runListCondition,
} from "../shared/run-rules.ts";
import { importRows, threadPageCondition, toStoredMessage } from "../shared/thread-messages.ts";
import { toUsageRow, type UsageSqlRow } from "../shared/usage-rows.ts";
import { splitOutbox } from "../shared/webhook-outbox.ts";
import type { GroupCommit } from "./group-commit.ts";
import { sqliteMetadataMatch, sqliteUsageQuery } from "./run-list-sql.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

export interface RunStoreOptions {
  /** Writes of the per-run hot path (create, start, complete, fail) are group-committed. */
  groupCommit: GroupCommit;
}

/**
 * The engine's writes wait out a locked database or a full disk far longer than a client's
 * create (which gets a 503 after the group commit's default, at once when the disk is full): a
 * failed engine write would leave its run pending until the next restart.
 */
const ENGINE_WRITE = { maxBusyWaitMs: 300_000, retryWhenStorageFull: true };

/** The insert of every run (a create, a workflow's step runs); column encodings as below. */
const prepareInsertRun = (raw: Database) =>
  raw.prepare<
    never,
    [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      number,
      string,
      string,
      string,
      string,
      string | null,
      number,
      string | null,
      string | null,
    ]
  >(
    `INSERT INTO runs (id, tenant_id, thread_id, channel, prompt_id, prompt_version_id, prompt_slug,
     prompt_version, priority, environment, inputs, metadata, encrypted_env_vars, created_at,
     workflow_run_id, workflow_step, status, attempts)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0)`,
  );

/**
 * Statements of the create path, prepared once on the raw connection: drizzle's placeholder
 * filling and value mapping cost more than the insert itself at thousands of creates a second.
 * Column encodings follow schema/sqlite-columns.ts (uuid text, epoch-ms integers, JSON text).
 */
// long-function: a table of prepared statements for the create path, one entry per statement.
const prepareCreateStatements = (raw: Database) => ({
  insertThread: raw.prepare<never, [string, string, number]>(
    "INSERT INTO threads (tenant_id, id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
  ),
  insertRun: prepareInsertRun(raw),
  // The engine's per-run writes (what they change: shared/run-rules.ts, the Postgres store's source).
  markStarted: raw.prepare<never, [number, number, string]>(
    // startedAt keeps the first start; attempts counts every one.
    "UPDATE runs SET started_at = coalesce(started_at, ?), attempts = ? WHERE id = ? AND status = 'pending'",
  ),
  complete: raw.prepare<
    { tenant_id: string; thread_id: string; channel: string },
    [
      string,
      string | null,
      string | null,
      string | null,
      string,
      string,
      string | null,
      string | null,
      string,
      number,
      string,
    ]
  >(
    // Steps and retrieval absent keep what is stored, as in the Postgres store (drizzle skips an
    // undefined value).
    `UPDATE runs SET status = 'completed', output = ?, output_json = ?, finish_reason = ?,
       memory_window = ?, token_usage = ?, cost = ?, steps = coalesce(?, steps),
       retrieval = coalesce(?, retrieval), citations = ?, error = NULL,
       finished_at = ?, encrypted_env_vars = NULL, lease_owner = NULL, lease_until = NULL,
       required_action = NULL, paused_step = NULL, pause_expires_at = NULL
     WHERE id = ? AND status = 'pending'
     RETURNING tenant_id, thread_id, channel`,
  ),
  // The steps are kept when not given; with a paused step, only a run still paused there ends.
  fail: raw.prepare<
    { id: string },
    [
      string,
      string | null,
      string | null,
      string | null,
      string | null,
      string | null,
      number,
      string,
      number | null,
      number | null,
    ]
  >(
    `UPDATE runs SET status = 'failed', error = ?, finish_reason = ?, memory_window = ?, cost = ?,
       steps = coalesce(?, steps), retrieval = coalesce(?, retrieval), finished_at = ?,
       encrypted_env_vars = NULL, lease_owner = NULL, lease_until = NULL,
       required_action = NULL, paused_step = NULL, pause_expires_at = NULL
     WHERE id = ? AND status = 'pending' AND (? IS NULL OR paused_step = ?)
     RETURNING id`,
  ),
  /** Once per model call: its own statement, so the JSON is the only value bound. */
  saveSteps: raw.prepare<{ id: string }, [string, string]>(
    "UPDATE runs SET steps = ? WHERE id = ? AND status = 'pending' RETURNING id",
  ),
  /** Steps with the run's searches (a retrieval or a knowledge_base tool call happened). */
  saveStepsAndRetrieval: raw.prepare<{ id: string }, [string, string, string]>(
    "UPDATE runs SET steps = ?, retrieval = ? WHERE id = ? AND status = 'pending' RETURNING id",
  ),
  insertMessage: raw.prepare<never, [string, string, string, string, string, string, string | null, number]>(
    `INSERT INTO messages (tenant_id, thread_id, channel, run_id, role, content, parts, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ),
  /** Sizes only, newest first, through messages_thread_channel_idx (octet_length reads no content). */
  selectMemorySizes: raw.prepare<MemoryRowSize, [string, string, string, number]>(
    `SELECT seq, run_id AS runId, octet_length(content) AS bytes,
        coalesce(octet_length(parts), 0) AS partsBytes FROM messages
      WHERE tenant_id = ? AND thread_id = ? AND channel = ? ORDER BY seq DESC LIMIT ?`,
  ),
  selectMemoryFrom: raw.prepare<
    { role: "user" | "assistant" | "tool"; content: string; parts: string | null },
    [string, string, string, number]
  >(
    `SELECT role, content, parts FROM messages
      WHERE tenant_id = ? AND thread_id = ? AND channel = ? AND seq >= ? ORDER BY seq`,
  ),
  /**
   * A run's history (RunStore.messagesBeforeRun): the newest rows before the first row written by
   * the run or a later run of its channel, both read in seq order through messages_thread_channel_idx.
   */
  selectMessagesBeforeRun: raw.prepare<
    { role: "user" | "assistant" | "tool"; content: string; parts: string | null },
    [string, string, string, number, string, number]
  >(
    `SELECT role, content, parts FROM (
       SELECT seq, role, content, parts FROM messages
        WHERE tenant_id = ?1 AND thread_id = ?2 AND channel = ?3
          AND seq < coalesce((
            SELECT m.seq FROM messages AS m JOIN runs AS r ON r.id = m.run_id
             WHERE m.tenant_id = ?1 AND m.thread_id = ?2 AND m.channel = ?3
               AND (r.created_at, r.id) >= (?4, ?5)
             ORDER BY m.seq LIMIT 1), 9223372036854775807)
        ORDER BY seq DESC LIMIT ?6)
     ORDER BY seq`,
  ),
  /** The channel's message count, from messages_thread_channel_idx alone. */
  countMemory: raw.prepare<{ total: number }, [string, string, string]>(
    "SELECT count(*) AS total FROM messages WHERE tenant_id = ? AND thread_id = ? AND channel = ?",
  ),
  /** Takes the key unless a fresh record holds it; returns nothing when it is taken. */
  claimIdempotencyKey: raw.prepare<
    { run_id: string },
    [string, string, string, string, string, number, number]
  >(
    `INSERT INTO idempotency_keys (tenant_id, key, request_hash, run_id, thread_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, key) DO UPDATE SET
       request_hash = excluded.request_hash, run_id = excluded.run_id,
       thread_id = excluded.thread_id, created_at = excluded.created_at
     WHERE idempotency_keys.created_at < ?
     RETURNING run_id`,
  ),
});

/** The runs row of a create, in the caller's transaction (its thread exists): the one insert of every run. */
const insertRunRow = (statements: { insertRun: ReturnType<typeof prepareInsertRun> }, run: NewRun): void => {
  withConstraintErrors("run", () =>
    statements.insertRun.run(
      run.id,
      run.tenantId,
      run.threadId,
      run.channel,
      run.promptId,
      run.promptVersionId,
      run.promptSlug,
      run.promptVersion,
      run.priority,
      run.environment,
      JSON.stringify(run.inputs),
      JSON.stringify(run.metadata),
      run.encryptedEnvVars ?? null,
      run.createdAt.getTime(),
      run.workflowRun?.id ?? null,
      run.workflowRun?.step ?? null,
    ),
  );
};

/**
 * The insert of a run, prepared on `raw`, for writers outside this store (a workflow's step runs,
 * docs/WORKFLOWS.md "Storage"): the same statement as a create, in the caller's transaction.
 */
export const prepareRunInsert = (raw: Database): ((run: NewRun) => void) => {
  const statements = { insertRun: prepareInsertRun(raw) };
  return (run) => insertRunRow(statements, run);
};

/** Inside the caller's transaction: each run event's body once, then its deliveries. */
export const insertDeliveries = (
  db: Pick<BunSQLiteDatabase, "insert">,
  deliveries: WebhookDeliveryRecord[],
): void => {
  if (deliveries.length === 0) return;
  const { payloads, events, rows } = splitOutbox(deliveries);
  if (payloads.length > 0) db.insert(webhookPayloads).values(payloads).onConflictDoNothing().run();
  if (events.length > 0) db.insert(webhookEvents).values(events).onConflictDoNothing().run();
  db.insert(webhookDeliveries).values(rows).run();
};

/** A messages row as memory: its parts (JSON text) parsed when it has them. */
const toMemoryMessage = ({
  role,
  content,
  parts,
}: {
  role: "user" | "assistant" | "tool";
  content: string;
  parts: string | null;
}) => (parts === null ? { role, content } : { role, content, parts: JSON.parse(parts) as MemoryPart[] });

/** A JSON column's text as drizzle's json mode writes it; NULL for null or absent. */
const jsonOrNull = (value: unknown): string | null =>
  value === undefined || value === null ? null : JSON.stringify(value);

/** A RunRecord's columns (the lease columns stay out of it; toRunRecord makes the pause of its columns). */
const runRecord = recordColumns(getTableColumns(runs));

const isPaused = isNotNull(runs.pausedStep);
const notPaused = isNull(runs.pausedStep);

/** A literal, not a parameter, so the partial indexes (`WHERE status = 'pending'`) apply. */
const isPending = sql`${runs.status} = 'pending'`;

const earlier = alias(runs, "earlier");

const isChannelHead = channelHeadCondition(runs, earlier);

/** Live leases of the run's tenant, the run's own excepted (per-tenant concurrency across instances). */
const liveLeasesOfTenant = (now: Date) => sql`(select count(*) from ${runs} as "earlier"
  where ${earlier.tenantId} = ${runs.tenantId} and ${earlier.status} = 'pending'
    and ${earlier.leaseOwner} is not null and ${earlier.leaseUntil} > ${now.getTime()}
    and ${earlier.id} <> ${runs.id})`;

const leaseFree = (now: Date) => or(sql`${runs.leaseOwner} is null`, lte(runs.leaseUntil, now));

const PRIORITIES = ["onsite", "normal", "low"] as const;

/** The columns of a thread's REST read (shared/thread-messages.ts maps them). */
const messageColumns = {
  seq: messages.seq,
  runId: messages.runId,
  externalId: messages.externalId,
  channel: messages.channel,
  role: messages.role,
  content: messages.content,
  parts: messages.parts,
  createdAt: messages.createdAt,
};

export const createRunStore = ({ db, raw }: SqliteContext, options: RunStoreOptions): RunStore => {
  const statements = prepareCreateStatements(raw);
  const { groupCommit } = options;
  const pending = eq(runs.status, "pending");

  /** Takes the key for its run unless a fresh record holds it (create and resume share this). */
  const claimIdempotencyKey = (idempotency: IdempotencyRecord, expiredBefore: Date | undefined): void => {
    const claimed = statements.claimIdempotencyKey.get(
      idempotency.tenantId,
      idempotency.key,
      idempotency.requestHash,
      idempotency.runId,
      idempotency.threadId,
      idempotency.createdAt.getTime(),
      // Without an expiry, any existing record holds the key.
      expiredBefore?.getTime() ?? Number.MIN_SAFE_INTEGER,
    );
    if (!claimed) {
      // Rolled back with the rest of the write by the group commit's savepoint.
      throw new PromptrunError("conflict", "the Idempotency-Key is already used by another run");
    }
  };

  const create = (run: NewRun, idempotency?: IdempotencyRecord, expiredBefore?: Date): void => {
    statements.insertThread.run(run.tenantId, run.threadId, run.createdAt.getTime());
    insertRunRow(statements, run);
    if (idempotency) claimIdempotencyKey(idempotency, expiredBefore);
  };

  return {
    create(run, idempotency, createOptions) {
      return groupCommit.submit(() => create(run, idempotency, createOptions?.idempotencyExpiredBefore));
    },

    async get(tenantId, id) {
      const row = db
        .select(runRecord)
        .from(runs)
        .where(and(eq(runs.id, id), eq(runs.tenantId, tenantId)))
        .get();
      return row ? toRunRecord(row) : null;
    },

    async getById(id) {
      const row = db.select(runRecord).from(runs).where(eq(runs.id, id)).get();
      return row ? toRunRecord(row) : null;
    },

    async list(tenantId, filter, page) {
      const rows: RunRecord[] = db
        .select(runRecord)
        .from(runs)
        .where(runListCondition(runs, tenantId, filter, page.cursor, sqliteMetadataMatch))
        .orderBy(sql`${runs.createdAt} desc`, sql`${runs.id} desc`)
        .limit(page.limit + 1)
        .all()
        .map(toRunRecord);
      return pageFrom(rows, page.limit, (row) => [row.createdAt.getTime(), row.id]);
    },

    async usage(tenantId, query) {
      return db.all<UsageSqlRow>(sqliteUsageQuery(tenantId, query)).map(toUsageRow);
    },

    async listPending() {
      return db
        .select(runRecord)
        .from(runs)
        .where(pending)
        .orderBy(asc(runs.createdAt), asc(runs.id))
        .all()
        .map(toRunRecord);
    },

    async pendingOutline() {
      return db
        .select({ tenantId: runs.tenantId, priority: runs.priority, count: count() })
        .from(runs)
        .where(isPending)
        .groupBy(runs.tenantId, runs.priority)
        .all();
    },

    async listPaused() {
      return db
        .select(runRecord)
        .from(runs)
        .where(and(isPending, isPaused))
        .orderBy(asc(runs.createdAt), asc(runs.id))
        .all()
        .map(toRunRecord);
    },

    async listPendingPage(tenantId, priority, after, limit) {
      return db
        .select({ ...runRecord, channelPredecessor: channelPredecessorSql(runs, earlier) })
        .from(runs)
        .where(pendingPageCondition(runs, tenantId, priority, after))
        .orderBy(asc(runs.createdAt), asc(runs.id))
        .limit(limit)
        .all()
        .map(({ channelPredecessor, ...row }) => ({ run: toRunRecord(row), channelPredecessor }));
    },

    markStarted(id, at, attempts) {
      return groupCommit.submit(() => {
        statements.markStarted.run(at.getTime(), attempts, id);
      }, ENGINE_WRITE);
    },

    complete(id, completion) {
      return groupCommit.submit(() => {
        const ended = statements.complete.get(
          completion.output,
          jsonOrNull(completion.outputJson),
          completion.finishReason ?? null,
          jsonOrNull(completion.memoryWindow),
          JSON.stringify(completion.tokenUsage),
          JSON.stringify(completion.cost),
          jsonOrNull(completion.steps),
          jsonOrNull(completion.retrieval),
          JSON.stringify(completion.citations ?? []),
          completion.finishedAt.getTime(),
          id,
        );
        if (!ended) return false;
        for (const message of completion.memory) {
          statements.insertMessage.run(
            ended.tenant_id,
            ended.thread_id,
            ended.channel,
            id,
            message.role,
            message.content,
            message.parts ? JSON.stringify(message.parts) : null,
            completion.finishedAt.getTime(),
          );
        }
        insertDeliveries(db, completion.deliveries);
        return true;
      }, ENGINE_WRITE);
    },

    fail(id, failure) {
      return groupCommit.submit(() => {
        const ended = statements.fail.get(
          failure.error,
          failure.finishReason ?? null,
          jsonOrNull(failure.memoryWindow),
          failure.cost === null ? null : JSON.stringify(failure.cost),
          failure.steps === undefined ? null : JSON.stringify(failure.steps),
          jsonOrNull(failure.retrieval),
          failure.finishedAt.getTime(),
          id,
          failure.pausedStep ?? null,
          failure.pausedStep ?? null,
        );
        if (!ended) return false;
        insertDeliveries(db, failure.deliveries);
        return true;
      }, ENGINE_WRITE);
    },

    saveSteps(id, steps, retrieval) {
      return groupCommit.submit(
        () =>
          Boolean(
            retrieval === undefined
              ? statements.saveSteps.get(JSON.stringify(steps), id)
              : statements.saveStepsAndRetrieval.get(JSON.stringify(steps), JSON.stringify(retrieval), id),
          ),
        ENGINE_WRITE,
      );
    },

    pause(id, paused) {
      return groupCommit.submit(() => {
        const row = db
          .update(runs)
          .set(pausedRunChanges(paused))
          .where(and(eq(runs.id, id), isPending, notPaused))
          .returning({ id: runs.id })
          .get();
        if (!row) return false;
        insertDeliveries(db, paused.deliveries);
        return true;
      }, ENGINE_WRITE);
    },

    resume(id, resumption, idempotency, resumeOptions) {
      // A client's request (tool outputs), like create: a locked database rejects it soon (503).
      return groupCommit.submit(() => {
        const row = db
          .update(runs)
          .set(resumedRunChanges(resumption))
          .where(and(eq(runs.id, id), isPending, eq(runs.pausedStep, resumption.step)))
          .returning({ id: runs.id })
          .get();
        if (!row) return false;
        if (idempotency) claimIdempotencyKey(idempotency, resumeOptions?.idempotencyExpiredBefore);
        return true;
      });
    },

    async listExpiredPauses(now, limit) {
      // runs_paused_idx: the paused runs only, by expiry.
      return db
        .select(runRecord)
        .from(runs)
        .where(and(isPaused, lte(runs.pauseExpiresAt, now), isPending))
        .orderBy(asc(runs.pauseExpiresAt), asc(runs.id))
        .limit(limit)
        .all()
        .map(toRunRecord);
    },

    async memory(tenantId, threadId, channel, bound = DEFAULT_MEMORY_BOUND) {
      // Synchronous reads on this connection: none of this process's writes falls between.
      const sizes = statements.selectMemorySizes.all(tenantId, threadId, channel, bound.maxMessages + 1);
      const { start } = memoryWindowOf(sizes, bound);
      const rows = start === null ? [] : statements.selectMemoryFrom.all(tenantId, threadId, channel, start);
      const total =
        knownTotal(sizes, bound) ?? statements.countMemory.get(tenantId, threadId, channel)?.total ?? 0;
      const messages = rows.map(toMemoryMessage);
      return { messages, dropped: Math.max(0, total - messages.length) };
    },

    async messagesBeforeRun(run, limit) {
      const rows = statements.selectMessagesBeforeRun.all(
        run.tenantId,
        run.threadId,
        run.channel,
        run.createdAt.getTime(),
        run.id,
        Math.max(0, limit),
      );
      return rows.map(toMemoryMessage);
    },

    async getThread(tenantId, threadId) {
      const thread = db
        .select({ id: threads.id, createdAt: threads.createdAt })
        .from(threads)
        .where(and(eq(threads.tenantId, tenantId), eq(threads.id, threadId)))
        .get();
      if (!thread) return null;
      const stored = db
        .select({
          runId: messages.runId,
          channel: messages.channel,
          role: messages.role,
          content: messages.content,
          createdAt: messages.createdAt,
        })
        .from(messages)
        .where(and(eq(messages.tenantId, tenantId), eq(messages.threadId, threadId)))
        .orderBy(asc(messages.seq))
        .all();
      return { ...thread, messages: stored };
    },

    async listMessages(tenantId, threadId, channel, page) {
      const rows = db
        .select(messageColumns)
        .from(messages)
        .where(threadPageCondition(messages, tenantId, threadId, channel, page.cursor))
        .orderBy(asc(messages.seq))
        .limit(page.limit + 1)
        .all();
      const { items, nextCursor } = pageFrom(rows, page.limit, (row) => [row.seq]);
      return { items: items.map(toStoredMessage), nextCursor };
    },

    importMessages(tenantId, threadId, channel, imported, now) {
      // One transaction (the group commit's); the unique messages_external_id_idx skips repeats.
      return groupCommit.submit(() => {
        db.insert(threads).values({ tenantId, id: threadId, createdAt: now }).onConflictDoNothing().run();
        const added = db
          .insert(messages)
          .values(importRows(tenantId, threadId, channel, imported, now))
          .onConflictDoNothing()
          .returning({ seq: messages.seq })
          .all();
        return { imported: added.length, skipped: imported.length - added.length };
      });
    },

    async findIdempotency(tenantId, key, notBefore) {
      return (
        db
          .select()
          .from(idempotencyKeys)
          .where(
            and(
              eq(idempotencyKeys.tenantId, tenantId),
              eq(idempotencyKeys.key, key),
              gte(idempotencyKeys.createdAt, notBefore),
            ),
          )
          .get() ?? null
      );
    },

    async countPending(tenantId) {
      const row = db
        .select({ pending: count() })
        .from(runs)
        .where(and(eq(runs.tenantId, tenantId), pending))
        .get();
      return row?.pending ?? 0;
    },

    async updateEncryptedEnvVars(id, encryptedEnvVars) {
      // Only a pending run keeps its envVars: an ended run's stay erased.
      db.update(runs)
        .set({ encryptedEnvVars })
        .where(and(eq(runs.id, id), pending))
        .run();
    },

    // One statement each, inside the group commit's IMMEDIATE transaction: SQLite's write lock
    // serializes claims, so channel order and the tenant limit hold even with other processes.
    claim(id, owner, leaseUntil, now, claimOptions) {
      const tenantLimit = claimOptions?.tenantLimit;
      return groupCommit.submit(() => {
        const claimed = db
          .update(runs)
          .set({ leaseOwner: owner, leaseUntil })
          .where(
            and(
              eq(runs.id, id),
              isPending,
              or(leaseFree(now), eq(runs.leaseOwner, owner)),
              // A paused run waits for its caller; only a cancel takes it (to end it).
              claimOptions?.ignoreChannelOrder ? undefined : notPaused,
              claimOptions?.ignoreChannelOrder ? undefined : isChannelHead,
              tenantLimit === undefined ? undefined : sql`${liveLeasesOfTenant(now)} < ${tenantLimit}`,
            ),
          )
          .returning({ id: runs.id })
          .get();
        return claimed !== undefined;
      }, ENGINE_WRITE);
    },

    renewLeases(owner, ids, leaseUntil) {
      if (ids.length === 0) return Promise.resolve({ renewed: [], cancelRequested: [] });
      return groupCommit.submit(() => {
        const rows = db
          .update(runs)
          .set({ leaseUntil })
          .where(and(inArray(runs.id, ids), eq(runs.leaseOwner, owner), isPending))
          .returning({ id: runs.id, cancelRequestedAt: runs.cancelRequestedAt })
          .all();
        return leaseRenewalFrom(rows);
      }, ENGINE_WRITE);
    },

    releaseLease(id, owner) {
      return groupCommit.submit(() => {
        db.update(runs)
          .set({ leaseOwner: null, leaseUntil: null })
          .where(and(eq(runs.id, id), eq(runs.leaseOwner, owner)))
          .run();
      }, ENGINE_WRITE);
    },

    async listClaimable(now, limit, listOptions) {
      const tenantLimit = listOptions?.tenantLimit;
      return PRIORITIES.flatMap((priority) =>
        db
          .select(runRecord)
          .from(runs)
          .where(
            and(
              isPending,
              sql`${runs.priority} = ${sql.raw(`'${priority}'`)}`,
              notPaused,
              leaseFree(now),
              // A paused head still blocks its channel (it is pending): the channel yields nothing.
              isChannelHead,
              tenantLimit === undefined ? undefined : sql`${liveLeasesOfTenant(now)} < ${tenantLimit}`,
            ),
          )
          .orderBy(asc(runs.createdAt), asc(runs.id))
          .limit(limit)
          .all()
          .map(toRunRecord),
      );
    },

    requestCancel(id, at) {
      return groupCommit.submit(() => {
        const row = db
          .update(runs)
          .set({ cancelRequestedAt: sql`coalesce(${runs.cancelRequestedAt}, ${at.getTime()})` })
          .where(and(eq(runs.id, id), isPending))
          .returning({ id: runs.id })
          .get();
        return row !== undefined;
      });
    },
  };
};
