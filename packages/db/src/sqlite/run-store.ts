import {
  type IdempotencyRecord,
  type NewRun,
  PromptrunError,
  type RunRecord,
  type RunStore,
  type WebhookDeliveryRecord,
} from "@promptrun/core";
import { and, asc, count, eq, getTableColumns, gte, inArray, lte, or, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { alias } from "drizzle-orm/sqlite-core";
import { recordColumns } from "../schema/record-columns.ts";
import { idempotencyKeys, messages, runs, threads, webhookDeliveries } from "../schema/sqlite.ts";
import { pageFrom } from "../shared/cursor.ts";
import {
  channelHeadCondition,
  completedRunChanges,
  completionMessages,
  failedRunChanges,
  leaseRenewalFrom,
  runListCondition,
} from "../shared/run-rules.ts";
import type { GroupCommit } from "./group-commit.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

export interface RunStoreOptions {
  /** Writes of the per-run hot path (create, start, complete, fail) are group-committed. */
  groupCommit: GroupCommit;
}

const placeholder = sql.placeholder;

/**
 * The engine's writes wait out a locked database or a full disk far longer than a client's
 * create (which gets a 503 after the group commit's default, at once when the disk is full): a
 * failed engine write would leave its run pending until the next restart.
 */
const ENGINE_WRITE = { maxBusyWaitMs: 300_000, retryWhenStorageFull: true };

/** Statements of the hot path, prepared once. */
const prepareCreateStatements = (db: BunSQLiteDatabase) => ({
  insertThread: db
    .insert(threads)
    .values({
      tenantId: placeholder("tenantId"),
      id: placeholder("threadId"),
      createdAt: placeholder("createdAt"),
    })
    .onConflictDoNothing()
    .prepare(),
  insertRun: db
    .insert(runs)
    .values({
      id: placeholder("id"),
      tenantId: placeholder("tenantId"),
      threadId: placeholder("threadId"),
      channel: placeholder("channel"),
      promptId: placeholder("promptId"),
      promptVersionId: placeholder("promptVersionId"),
      promptSlug: placeholder("promptSlug"),
      promptVersion: placeholder("promptVersion"),
      priority: placeholder("priority"),
      environment: placeholder("environment"),
      status: "pending",
      inputs: placeholder("inputs"),
      metadata: placeholder("metadata"),
      encryptedEnvVars: placeholder("encryptedEnvVars"),
      createdAt: placeholder("createdAt"),
      attempts: 0,
    })
    .prepare(),
  /** Takes the key unless a fresh record holds it; returns nothing when it is taken. */
  claimIdempotencyKey: db
    .insert(idempotencyKeys)
    .values({
      tenantId: placeholder("tenantId"),
      key: placeholder("key"),
      requestHash: placeholder("requestHash"),
      runId: placeholder("runId"),
      threadId: placeholder("threadId"),
      createdAt: placeholder("createdAt"),
    })
    .onConflictDoUpdate({
      target: [idempotencyKeys.tenantId, idempotencyKeys.key],
      set: {
        requestHash: sql`excluded.request_hash`,
        runId: sql`excluded.run_id`,
        threadId: sql`excluded.thread_id`,
        createdAt: sql`excluded.created_at`,
      },
      setWhere: sql`${idempotencyKeys.createdAt} < ${placeholder("staleBeforeMs")}`,
    })
    .returning({ runId: idempotencyKeys.runId })
    .prepare(),
});

const insertDeliveries = (db: BunSQLiteDatabase, deliveries: WebhookDeliveryRecord[]): void => {
  if (deliveries.length > 0) db.insert(webhookDeliveries).values(deliveries).run();
};

/** A RunRecord's columns (the lease columns stay out of it). */
const runRecord = recordColumns(getTableColumns(runs));

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

export const createRunStore = ({ db }: SqliteContext, options: RunStoreOptions): RunStore => {
  const statements = prepareCreateStatements(db);
  const { groupCommit } = options;
  const pending = eq(runs.status, "pending");

  const create = (run: NewRun, idempotency?: IdempotencyRecord, expiredBefore?: Date): void => {
    statements.insertThread.run({ tenantId: run.tenantId, threadId: run.threadId, createdAt: run.createdAt });
    withConstraintErrors("run", () =>
      statements.insertRun.run({ ...run, encryptedEnvVars: run.encryptedEnvVars ?? null }),
    );
    if (idempotency) {
      const claimed = statements.claimIdempotencyKey.get({
        ...idempotency,
        // Without an expiry, any existing record holds the key.
        staleBeforeMs: expiredBefore?.getTime() ?? Number.MIN_SAFE_INTEGER,
      });
      if (!claimed) {
        // Rolled back with the run by the caller's savepoint.
        throw new PromptrunError("conflict", "the Idempotency-Key is already used by another run");
      }
    }
  };

  return {
    create(run, idempotency, createOptions) {
      return groupCommit.submit(() => create(run, idempotency, createOptions?.idempotencyExpiredBefore));
    },

    async get(tenantId, id) {
      return (
        db
          .select(runRecord)
          .from(runs)
          .where(and(eq(runs.id, id), eq(runs.tenantId, tenantId)))
          .get() ?? null
      );
    },

    async getById(id) {
      return db.select(runRecord).from(runs).where(eq(runs.id, id)).get() ?? null;
    },

    async list(tenantId, filter, page) {
      const rows: RunRecord[] = db
        .select(runRecord)
        .from(runs)
        .where(runListCondition(runs, tenantId, filter, page.cursor))
        .orderBy(sql`${runs.createdAt} desc`, sql`${runs.id} desc`)
        .limit(page.limit + 1)
        .all();
      return pageFrom(rows, page.limit, (row) => [row.createdAt.getTime(), row.id]);
    },

    async listPending() {
      return db.select(runRecord).from(runs).where(pending).orderBy(asc(runs.createdAt), asc(runs.id)).all();
    },

    markStarted(id, at, attempts) {
      return groupCommit.submit(() => {
        db.update(runs)
          // startedAt keeps the first start; attempts counts every one.
          .set({ startedAt: sql`coalesce(${runs.startedAt}, ${at.getTime()})`, attempts })
          .where(and(eq(runs.id, id), pending))
          .run();
      }, ENGINE_WRITE);
    },

    complete(id, completion) {
      return groupCommit.submit(() => {
        const ended = db
          .update(runs)
          .set(completedRunChanges(completion))
          .where(and(eq(runs.id, id), pending))
          .returning({ tenantId: runs.tenantId, threadId: runs.threadId, channel: runs.channel })
          .get();
        if (!ended) return false;
        if (completion.memory.length > 0) {
          db.insert(messages)
            .values(completionMessages(ended, id, completion))
            .run();
        }
        insertDeliveries(db, completion.deliveries);
        return true;
      }, ENGINE_WRITE);
    },

    fail(id, failure) {
      return groupCommit.submit(() => {
        const ended = db
          .update(runs)
          .set(failedRunChanges(failure))
          .where(and(eq(runs.id, id), pending))
          .returning({ id: runs.id })
          .get();
        if (!ended) return false;
        insertDeliveries(db, failure.deliveries);
        return true;
      }, ENGINE_WRITE);
    },

    async memory(tenantId, threadId, channel) {
      return db
        .select({ role: messages.role, content: messages.content })
        .from(messages)
        .where(
          and(
            eq(messages.tenantId, tenantId),
            eq(messages.threadId, threadId),
            eq(messages.channel, channel),
          ),
        )
        .orderBy(asc(messages.seq))
        .all();
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
              leaseFree(now),
              isChannelHead,
              tenantLimit === undefined ? undefined : sql`${liveLeasesOfTenant(now)} < ${tenantLimit}`,
            ),
          )
          .orderBy(asc(runs.createdAt), asc(runs.id))
          .limit(limit)
          .all(),
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
