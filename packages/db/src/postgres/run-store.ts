import type { RunRecord, RunStore, WebhookDeliveryRecord } from "@promptrun/core";
import { and, asc, count, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import { idempotencyKeys, messages, runs, threads, webhookDeliveries } from "../schema/postgres.ts";
import { decodeCursor, pageFrom } from "../sqlite/cursor.ts";
import type { GroupCommit } from "./group-commit.ts";
import type { RunInsert } from "./insert-runs.ts";
import type { PostgresContext, PostgresTransaction } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";

export interface RunStoreOptions {
  /** Creates arriving in the same event-loop turn are committed together. */
  creates: GroupCommit<RunInsert, undefined>;
}

const insertDeliveries = async (
  tx: PostgresTransaction,
  deliveries: WebhookDeliveryRecord[],
): Promise<void> => {
  if (deliveries.length > 0) await tx.insert(webhookDeliveries).values(deliveries);
};

/** Newest first: (createdAt desc, id desc). */
const runsBefore = (cursor: string): SQL | undefined => {
  const [createdAtMs, id] = decodeCursor(cursor, ["number", "string"]);
  const createdAt = new Date(createdAtMs);
  return or(lt(runs.createdAt, createdAt), and(eq(runs.createdAt, createdAt), lt(runs.id, id)));
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
        .select()
        .from(runs)
        .where(and(eq(runs.id, id), eq(runs.tenantId, tenantId)));
      return row ?? null;
    },

    async getById(id) {
      const [row] = await db.select().from(runs).where(eq(runs.id, id));
      return row ?? null;
    },

    async list(tenantId, filter, page) {
      const rows: RunRecord[] = await db
        .select()
        .from(runs)
        .where(
          and(
            eq(runs.tenantId, tenantId),
            filter.threadId === undefined ? undefined : eq(runs.threadId, filter.threadId),
            filter.channel === undefined ? undefined : eq(runs.channel, filter.channel),
            filter.slug === undefined ? undefined : eq(runs.promptSlug, filter.slug),
            filter.status === undefined ? undefined : eq(runs.status, filter.status),
            page.cursor ? runsBefore(page.cursor) : undefined,
          ),
        )
        .orderBy(sql`${runs.createdAt} desc`, sql`${runs.id} desc`)
        .limit(page.limit + 1);
      return pageFrom(rows, page.limit, (row) => [row.createdAt.getTime(), row.id]);
    },

    async listPending() {
      return db.select().from(runs).where(pending).orderBy(asc(runs.createdAt), asc(runs.id));
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
            .set({
              status: "completed",
              output: completion.output,
              tokenUsage: completion.tokenUsage,
              cost: completion.cost,
              error: null,
              finishedAt: completion.finishedAt,
              encryptedEnvVars: null,
            })
            .where(and(eq(runs.id, id), pending))
            .returning({ tenantId: runs.tenantId, threadId: runs.threadId, channel: runs.channel });
          if (!ended) return false;
          if (completion.memory.length > 0) {
            await tx.insert(messages).values(
              completion.memory.map((message) => ({
                ...ended,
                runId: id,
                role: message.role,
                content: message.content,
                createdAt: completion.finishedAt,
              })),
            );
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
            .set({
              status: "failed",
              error: failure.error,
              cost: failure.cost,
              finishedAt: failure.finishedAt,
              encryptedEnvVars: null,
            })
            .where(and(eq(runs.id, id), pending))
            .returning({ id: runs.id });
          if (!ended) return false;
          await insertDeliveries(tx, failure.deliveries);
          return true;
        }),
      );
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
        .orderBy(asc(messages.seq));
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
  };
};
