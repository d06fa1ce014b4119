import {
  DEFAULT_MEMORY_BOUND,
  knownTotal,
  memoryWindowOf,
  type RunRecord,
  type RunStore,
  type WebhookDeliveryRecord,
} from "@promptrun/core";
import {
  type AnyColumn,
  and,
  asc,
  count,
  desc,
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
import { alias } from "drizzle-orm/pg-core";
import {
  idempotencyKeys,
  messages,
  runs,
  threads,
  webhookDeliveries,
  webhookEvents,
  webhookPayloads,
} from "../schema/postgres.ts";
import { recordColumns } from "../schema/record-columns.ts";
import { pageFrom } from "../shared/cursor.ts";
import { pausedRunChanges, resumedRunChanges, toRunRecord } from "../shared/run-records.ts";
import {
  channelHeadCondition,
  channelPredecessorSql,
  completedRunChanges,
  completionMessages,
  failedRunChanges,
  leaseRenewalFrom,
  pendingPageCondition,
  runListCondition,
} from "../shared/run-rules.ts";
import { importRows, threadPageCondition, toStoredMessage } from "../shared/thread-messages.ts";
import { toUsageRow, type UsageSqlRow } from "../shared/usage-rows.ts";
import { splitOutbox } from "../shared/webhook-outbox.ts";
import { listClaimableIds } from "./claimable-runs.ts";
import type { GroupCommit } from "./group-commit.ts";
import { claimIdempotencyKey, type RunInsert } from "./insert-runs.ts";
import type { PostgresContext, PostgresTransaction } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";
import { postgresMetadataMatch, postgresUsageQuery } from "./run-list-sql.ts";

export interface RunStoreOptions {
  /** Creates arriving in the same event-loop turn are committed together. */
  creates: GroupCommit<RunInsert, undefined>;
}

/** Inside the caller's transaction: each event's body once, then its deliveries. */
export const insertDeliveries = async (
  tx: PostgresTransaction,
  deliveries: WebhookDeliveryRecord[],
): Promise<void> => {
  if (deliveries.length === 0) return;
  const { payloads, events, rows } = splitOutbox(deliveries);
  if (payloads.length > 0) await tx.insert(webhookPayloads).values(payloads).onConflictDoNothing();
  if (events.length > 0) await tx.insert(webhookEvents).values(events).onConflictDoNothing();
  await tx.insert(webhookDeliveries).values(rows);
};

/** A RunRecord's columns (the lease columns stay out of it; toRunRecord makes the pause of its columns). */
const runRecord = recordColumns(getTableColumns(runs));

const isPaused = isNotNull(runs.pausedStep);
const notPaused = isNull(runs.pausedStep);

/** A literal, not a parameter: the partial indexes (`WHERE status = 'pending'`) then always apply. */
const isPending = sql`${runs.status} = 'pending'`;

/** Advisory-lock namespace of run claims (two-int keys: the tenant's hash is the second). */
const CLAIM_LOCK_NAMESPACE = 0x70720001;

const earlier = alias(runs, "earlier");

const isChannelHead = channelHeadCondition(runs, earlier);

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

export const createRunStore = ({ db }: PostgresContext, options: RunStoreOptions): RunStore => {
  const pending = eq(runs.status, "pending");

  return {
    create(run, idempotency, createOptions) {
      return options.creates.submit({
        run,
        ...(idempotency ? { idempotency } : {}),
        ...(createOptions?.idempotencyExpiredBefore
          ? { idempotencyExpiredBefore: createOptions.idempotencyExpiredBefore }
          : {}),
      });
    },

    async get(tenantId, id) {
      const [row] = await db
        .select(runRecord)
        .from(runs)
        .where(and(eq(runs.id, id), eq(runs.tenantId, tenantId)));
      return row ? toRunRecord(row) : null;
    },

    async getById(id) {
      const [row] = await db.select(runRecord).from(runs).where(eq(runs.id, id));
      return row ? toRunRecord(row) : null;
    },

    async list(tenantId, filter, page) {
      const rows = await db
        .select(runRecord)
        .from(runs)
        .where(runListCondition(runs, tenantId, filter, page.cursor, postgresMetadataMatch))
        .orderBy(sql`${runs.createdAt} desc`, sql`${runs.id} desc`)
        .limit(page.limit + 1);
      return pageFrom(rows.map(toRunRecord), page.limit, (row) => [row.createdAt.getTime(), row.id]);
    },

    async usage(tenantId, query) {
      const rows = await db.execute<UsageSqlRow & Record<string, unknown>>(
        postgresUsageQuery(tenantId, query),
      );
      return [...rows].map(toUsageRow);
    },

    async listPending() {
      const rows = await db
        .select(runRecord)
        .from(runs)
        .where(pending)
        .orderBy(asc(runs.createdAt), asc(runs.id));
      return rows.map(toRunRecord);
    },

    async pendingOutline() {
      const rows = await db
        .select({ tenantId: runs.tenantId, priority: runs.priority, count: count() })
        .from(runs)
        .where(isPending)
        .groupBy(runs.tenantId, runs.priority);
      return rows;
    },

    async listPaused() {
      const rows = await db
        .select(runRecord)
        .from(runs)
        .where(and(isPending, isPaused))
        .orderBy(asc(runs.createdAt), asc(runs.id));
      return rows.map(toRunRecord);
    },

    async listPendingPage(tenantId, priority, after, limit) {
      const rows = await db
        .select({ ...runRecord, channelPredecessor: channelPredecessorSql(runs, earlier) })
        .from(runs)
        .where(pendingPageCondition(runs, tenantId, priority, after))
        .orderBy(asc(runs.createdAt), asc(runs.id))
        .limit(limit);
      return rows.map(({ channelPredecessor, ...row }) => ({ run: toRunRecord(row), channelPredecessor }));
    },

    async markStarted(id, at, attempts) {
      await db
        .update(runs)
        // startedAt keeps the first start; attempts counts every one.
        .set({ startedAt: sql`coalesce(${runs.startedAt}, ${at.toISOString()}::timestamptz)`, attempts })
        .where(and(eq(runs.id, id), pending));
    },

    complete(id, completion) {
      return withConstraintErrors("run completion", () =>
        db.transaction(async (tx) => {
          // Compare-and-set: of concurrent enders, the first to lock the row wins; the others
          // re-check `status = 'pending'` after its commit and update nothing.
          const [ended] = await tx
            .update(runs)
            .set(completedRunChanges(completion))
            .where(and(eq(runs.id, id), pending))
            .returning({ tenantId: runs.tenantId, threadId: runs.threadId, channel: runs.channel });
          if (!ended) return false;
          if (completion.memory.length > 0) {
            await tx.insert(messages).values(completionMessages(ended, id, completion));
          }
          await insertDeliveries(tx, completion.deliveries);
          return true;
        }),
      );
    },

    fail(id, failure) {
      return withConstraintErrors("run failure", () =>
        db.transaction(async (tx) => {
          const [ended] = await tx
            .update(runs)
            .set(failedRunChanges(failure))
            .where(
              and(
                eq(runs.id, id),
                pending,
                // An expiring pause fails only a run still paused there (a resume may have won).
                failure.pausedStep === undefined ? undefined : eq(runs.pausedStep, failure.pausedStep),
              ),
            )
            .returning({ id: runs.id });
          if (!ended) return false;
          await insertDeliveries(tx, failure.deliveries);
          return true;
        }),
      );
    },

    async saveSteps(id, steps, retrieval) {
      const [row] = await db
        .update(runs)
        .set(retrieval === undefined ? { steps } : { steps, retrieval })
        .where(and(eq(runs.id, id), pending))
        .returning({ id: runs.id });
      return row !== undefined;
    },

    pause(id, paused) {
      return withConstraintErrors("run pause", () =>
        db.transaction(async (tx) => {
          const [row] = await tx
            .update(runs)
            .set(pausedRunChanges(paused))
            .where(and(eq(runs.id, id), pending, notPaused))
            .returning({ id: runs.id });
          if (!row) return false;
          await insertDeliveries(tx, paused.deliveries);
          return true;
        }),
      );
    },

    resume(id, resumption, idempotency, resumeOptions) {
      return withConstraintErrors("run resume", () =>
        db.transaction(async (tx) => {
          // Compare-and-set on the pause's step: of concurrent resumes (and an expiring fail),
          // the first to lock the row wins; the others re-check after its commit and find none.
          const [row] = await tx
            .update(runs)
            .set(resumedRunChanges(resumption))
            .where(and(eq(runs.id, id), pending, eq(runs.pausedStep, resumption.step)))
            .returning({ id: runs.id });
          if (!row) return false;
          if (idempotency) {
            await claimIdempotencyKey(tx, idempotency, resumeOptions?.idempotencyExpiredBefore);
          }
          return true;
        }),
      );
    },

    async listExpiredPauses(now, limit) {
      // runs_paused_idx: the paused runs only, by expiry.
      const rows = await db
        .select(runRecord)
        .from(runs)
        .where(and(isPaused, lte(runs.pauseExpiresAt, now), isPending))
        .orderBy(asc(runs.pauseExpiresAt), asc(runs.id))
        .limit(limit);
      return rows.map(toRunRecord);
    },

    async memory(tenantId, threadId, channel, bound = DEFAULT_MEMORY_BOUND) {
      const ofChannel = and(
        eq(messages.tenantId, tenantId),
        eq(messages.threadId, threadId),
        eq(messages.channel, channel),
      );
      // Sizes only, newest first, through messages_thread_channel_idx (octet_length of a
      // TOASTed text reads its header, not its content; json → text is a relabelling cast);
      // then the contents of the window.
      const sizes = await db
        .select({
          seq: messages.seq,
          runId: messages.runId,
          bytes: sql<number>`octet_length(${messages.content})::int`,
          partsBytes: sql<number>`coalesce(octet_length(${messages.parts}::text), 0)::int`,
        })
        .from(messages)
        .where(ofChannel)
        .orderBy(desc(messages.seq))
        .limit(bound.maxMessages + 1);
      const { start } = memoryWindowOf(sizes, bound);
      // Exchanges are only appended, so rows from `start` on are the window plus, at most, an
      // exchange completed since the first read (a newer one than any run still waiting).
      const rows =
        start === null
          ? []
          : await db
              .select({ role: messages.role, content: messages.content, parts: messages.parts })
              .from(messages)
              .where(and(ofChannel, gte(messages.seq, start)))
              .orderBy(asc(messages.seq));
      let total = knownTotal(sizes, bound);
      if (total === null) {
        const [counted] = await db.select({ total: count() }).from(messages).where(ofChannel);
        total = counted?.total ?? 0;
      }
      const carried = rows.map(({ role, content, parts }) =>
        parts === null ? { role, content } : { role, content, parts },
      );
      return { messages: carried, dropped: Math.max(0, total - carried.length) };
    },

    async messagesBeforeRun(run, limit) {
      const ofChannel = (table: Record<"tenantId" | "threadId" | "channel", AnyColumn>) =>
        and(
          eq(table.tenantId, run.tenantId),
          eq(table.threadId, run.threadId),
          eq(table.channel, run.channel),
        );
      // Where the run's exchange starts: the first row of the run or of a later run of the
      // channel, in seq order through messages_thread_channel_idx (a run's rows carry its id).
      const exchange = alias(messages, "exchange");
      const writer = alias(runs, "writer");
      const start = db
        .select({ seq: exchange.seq })
        .from(exchange)
        .innerJoin(writer, eq(writer.id, exchange.runId))
        .where(
          and(
            ofChannel(exchange),
            sql`(${writer.createdAt}, ${writer.id}) >= (${run.createdAt.toISOString()}::timestamptz, ${run.id})`,
          ),
        )
        .orderBy(asc(exchange.seq))
        .limit(1);
      const newestFirst = await db
        .select({ role: messages.role, content: messages.content, parts: messages.parts })
        .from(messages)
        .where(
          and(ofChannel(messages), sql`${messages.seq} < coalesce((${start}), ${Number.MAX_SAFE_INTEGER})`),
        )
        .orderBy(desc(messages.seq))
        .limit(Math.max(0, limit));
      return newestFirst
        .reverse()
        .map(({ role, content, parts }) => (parts === null ? { role, content } : { role, content, parts }));
    },

    async getThread(tenantId, threadId) {
      const [thread] = await db
        .select({ id: threads.id, createdAt: threads.createdAt })
        .from(threads)
        .where(and(eq(threads.tenantId, tenantId), eq(threads.id, threadId)));
      if (!thread) return null;
      const stored = await db
        .select({
          runId: messages.runId,
          channel: messages.channel,
          role: messages.role,
          content: messages.content,
          createdAt: messages.createdAt,
        })
        .from(messages)
        .where(and(eq(messages.tenantId, tenantId), eq(messages.threadId, threadId)))
        .orderBy(asc(messages.seq));
      return { ...thread, messages: stored };
    },

    async listMessages(tenantId, threadId, channel, page) {
      const rows = await db
        .select(messageColumns)
        .from(messages)
        .where(threadPageCondition(messages, tenantId, threadId, channel, page.cursor))
        .orderBy(asc(messages.seq))
        .limit(page.limit + 1);
      const { items, nextCursor } = pageFrom(rows, page.limit, (row) => [row.seq]);
      return { items: items.map(toStoredMessage), nextCursor };
    },

    async importMessages(tenantId, threadId, channel, imported, now) {
      return db.transaction(async (tx) => {
        await tx.insert(threads).values({ tenantId, id: threadId, createdAt: now }).onConflictDoNothing();
        // ON CONFLICT DO NOTHING on messages_external_id_idx: a concurrent identical import
        // waits for the other transaction and then skips its rows.
        const added = await tx
          .insert(messages)
          .values(importRows(tenantId, threadId, channel, imported, now))
          .onConflictDoNothing()
          .returning({ seq: messages.seq });
        return { imported: added.length, skipped: imported.length - added.length };
      });
    },

    async findIdempotency(tenantId, key, notBefore) {
      const [row] = await db
        .select()
        .from(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.tenantId, tenantId),
            eq(idempotencyKeys.key, key),
            gte(idempotencyKeys.createdAt, notBefore),
          ),
        );
      return row ?? null;
    },

    async countPending(tenantId) {
      const [row] = await db
        .select({ pending: count() })
        .from(runs)
        .where(and(eq(runs.tenantId, tenantId), pending));
      return row?.pending ?? 0;
    },

    async updateEncryptedEnvVars(id, encryptedEnvVars) {
      // Only a pending run keeps its envVars: an ended run's stay erased.
      await db
        .update(runs)
        .set({ encryptedEnvVars })
        .where(and(eq(runs.id, id), pending));
    },

    claim(id, owner, leaseUntil, now, claimOptions) {
      const tenantLimit = claimOptions?.tenantLimit;
      return db.transaction(async (tx) => {
        // Claims of one tenant take turns: each sees the leases and channel heads the previous
        // one left, so neither channel order nor the tenant limit can be raced past.
        // A tenant already at its limit is refused before the lock: while a tenant's slots are
        // full, every instance's claims would otherwise queue on that lock, each holding a
        // pooled connection that creates and lookups wait for. Leases only free up by a
        // release, which announces work: the run is polled and claimed again then.
        const [target] = await tx.execute<{ id: string; locked: boolean | null }>(
          tenantLimit === undefined
            ? sql`
          select ${runs.id} as id, (select true from pg_advisory_xact_lock(${CLAIM_LOCK_NAMESPACE}::int, hashtext(${runs.tenantId}))) as locked
          from ${runs} where ${runs.id} = ${id}`
            : sql`
          select target.id as id, case when live.leases < ${tenantLimit} then
            (select true from pg_advisory_xact_lock(${CLAIM_LOCK_NAMESPACE}::int, hashtext(target.tenant_id))) end as locked
          from runs target, lateral (select count(*) as leases from runs leased
            where leased.tenant_id = target.tenant_id and leased.status = 'pending'
              and leased.lease_owner is not null
              and leased.lease_until > ${now.toISOString()}::timestamptz
              and leased.id <> target.id) live
          where target.id = ${id}`,
        );
        if (!target?.locked) return false;
        const [claimed] = await tx
          .update(runs)
          .set({ leaseOwner: owner, leaseUntil })
          .where(
            and(
              eq(runs.id, id),
              isPending,
              or(sql`${runs.leaseOwner} is null`, lte(runs.leaseUntil, now), eq(runs.leaseOwner, owner)),
              // A paused run waits for its caller; only a cancel takes it (to end it).
              claimOptions?.ignoreChannelOrder ? undefined : notPaused,
              claimOptions?.ignoreChannelOrder ? undefined : isChannelHead,
              tenantLimit === undefined
                ? undefined
                : sql`(select count(*) from ${runs} as "earlier"
                    where ${earlier.tenantId} = ${runs.tenantId} and ${earlier.status} = 'pending'
                      and ${earlier.leaseOwner} is not null
                      and ${earlier.leaseUntil} > ${now.toISOString()}::timestamptz
                      and ${earlier.id} <> ${runs.id}) < ${tenantLimit}`,
            ),
          )
          .returning({ id: runs.id });
        return claimed !== undefined;
      });
    },

    async renewLeases(owner, ids, leaseUntil) {
      if (ids.length === 0) return { renewed: [], cancelRequested: [] };
      const rows = await db
        .update(runs)
        .set({ leaseUntil })
        .where(and(inArray(runs.id, ids), eq(runs.leaseOwner, owner), isPending))
        .returning({ id: runs.id, cancelRequestedAt: runs.cancelRequestedAt });
      return leaseRenewalFrom(rows);
    },

    async releaseLease(id, owner) {
      await db
        .update(runs)
        .set({ leaseOwner: null, leaseUntil: null })
        .where(and(eq(runs.id, id), eq(runs.leaseOwner, owner)));
    },

    async listClaimable(now, limit, listOptions) {
      const ids = await listClaimableIds(db, now, limit, listOptions?.tenantLimit);
      if (ids.length === 0) return [];
      const rows: RunRecord[] = (
        await db
          .select(runRecord)
          .from(runs)
          .where(and(inArray(runs.id, ids), notPaused))
          .orderBy(asc(runs.createdAt), asc(runs.id))
      ).map(toRunRecord);
      return PRIORITIES.flatMap((priority) =>
        rows.filter((row) => row.priority === priority).slice(0, limit),
      );
    },

    async requestCancel(id, at) {
      const [row] = await db
        .update(runs)
        .set({
          cancelRequestedAt: sql`coalesce(${runs.cancelRequestedAt}, ${at.toISOString()}::timestamptz)`,
        })
        .where(and(eq(runs.id, id), isPending))
        .returning({ id: runs.id });
      return row !== undefined;
    },
  };
};
