import type { WebhookDeliveryRecord, WebhookRecord, WebhookStore } from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, sql } from "drizzle-orm";
import { recordColumns } from "../schema/record-columns.ts";
import {
  environments,
  webhookAttempts,
  webhookDeliveries,
  webhookEvents,
  webhookPayloads,
  webhooks,
} from "../schema/sqlite.ts";
import {
  attemptListCondition,
  deliveryClaimable,
  liveWebhook,
  webhookAttemptRecordColumns,
  webhookRecordColumns,
} from "../shared/webhook-columns.ts";
import { dueDeliveriesQuery, dueRankFields, payloadQuery } from "../shared/webhook-queries.ts";
import { insertDeliveries } from "./run-store.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

const webhookColumns = webhookRecordColumns(webhooks, environments);

/** A WebhookDeliveryState's columns (the lease columns stay out of it; the body lives in webhook_payloads). */
const deliveryRecord = recordColumns(getTableColumns(webhookDeliveries));

const live = liveWebhook(webhooks);

export const createWebhookStore = ({ db, raw, clock }: SqliteContext): WebhookStore => {
  const selectWebhooks = () =>
    db
      .select(webhookColumns)
      .from(webhooks)
      .innerJoin(environments, eq(environments.id, webhooks.environmentId));
  // The outbox's reads (shared/webhook-queries.ts) start from these selects.
  const dueSelects = {
    webhooks,
    webhookDeliveries,
    deliveryRecords: () => db.select(deliveryRecord).from(webhookDeliveries).$dynamic(),
    deliveryRanks: () => db.select(dueRankFields(webhookDeliveries)).from(webhookDeliveries).$dynamic(),
  };

  // Read for every run that ends (its webhook deliveries): built and prepared once. Most
  // environments have no webhook; the probe answers that in a few µs, where the full select (a
  // join and a sort) costs ≈ 25 µs even when it finds nothing (docs/PERFORMANCE.md).
  const anyWebhookOfEnvironment = raw.prepare<{ id: string }, { environmentId: string }>(
    "SELECT id FROM webhooks WHERE environment_id = $environmentId AND deleted_at IS NULL LIMIT 1",
  );
  // The dispatcher polls every 250 ms; with nothing due, the full ranked select (built by drizzle
  // at each call) was ≈ 2 ms of an idle server's every poll. A superset probe on the due index first.
  const anyDueDelivery = raw.prepare<{ id: string }, { now: number }>(
    "SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $now LIMIT 1",
  );
  const webhooksOfEnvironment = selectWebhooks()
    .where(and(eq(webhooks.environmentId, sql.placeholder("environmentId")), live))
    .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
    .prepare();

  return {
    async create(webhook: WebhookRecord) {
      const { environment: _name, ...row } = webhook;
      withConstraintErrors("webhook", () => db.insert(webhooks).values(row).run());
    },

    async get(tenantId, id) {
      return (
        selectWebhooks()
          .where(and(eq(webhooks.id, id), eq(webhooks.tenantId, tenantId), live))
          .get() ?? null
      );
    },

    async list(tenantId) {
      return selectWebhooks()
        .where(and(eq(webhooks.tenantId, tenantId), live))
        .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
        .all();
    },

    async listForEnvironment(environmentId) {
      if (anyWebhookOfEnvironment.get({ environmentId }) === null) return [];
      return webhooksOfEnvironment.all({ environmentId });
    },

    async setEnabled(id, enabled) {
      // Re-enabling starts a fresh failure streak.
      db.update(webhooks)
        .set(enabled ? { enabled, failureStreak: 0 } : { enabled })
        .where(and(eq(webhooks.id, id), live))
        .run();
    },

    async delete(tenantId, id) {
      // A soft delete keeps the delivery history. The secret is erased, and pending deliveries,
      // which have nowhere to go now, end failed.
      return db.transaction(
        (tx) => {
          const deleted = tx
            .update(webhooks)
            .set({ deletedAt: clock.now(), enabled: false, encryptedSecret: "" })
            .where(and(eq(webhooks.id, id), eq(webhooks.tenantId, tenantId), live))
            .returning({ id: webhooks.id })
            .get();
          if (!deleted) return false;
          tx.update(webhookDeliveries)
            .set({ status: "failed", nextAttemptAt: null })
            .where(and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.status, "pending")))
            .run();
          return true;
        },
        { behavior: "immediate" },
      );
    },

    async enqueueDeliveries(deliveries: WebhookDeliveryRecord[]) {
      if (deliveries.length === 0) return;
      withConstraintErrors("webhook delivery", () =>
        db.transaction((tx) => insertDeliveries(tx, deliveries), { behavior: "immediate" }),
      );
    },

    async getEventPayload(eventId) {
      const select = db.select({ payload: webhookEvents.payload }).from(webhookEvents);
      return select.where(eq(webhookEvents.id, eventId)).get()?.payload ?? null;
    },

    async getPayload(runId, eventType) {
      const select = db.select({ payload: webhookPayloads.payload }).from(webhookPayloads).$dynamic();
      return payloadQuery(select, webhookPayloads, runId, eventType).get()?.payload ?? null;
    },

    async dueDeliveries(now, limit, options) {
      if (anyDueDelivery.get({ now: now.getTime() }) === null) return [];
      return dueDeliveriesQuery(dueSelects, now, limit, options?.perWebhook).all();
    },

    async recordAttempt(attempt, outcome) {
      db.transaction(
        (tx) => {
          withConstraintErrors("webhook attempt", () => tx.insert(webhookAttempts).values(attempt).run());
          const delivery = tx
            .update(webhookDeliveries)
            .set({
              status: outcome.status,
              attempts: sql`max(${webhookDeliveries.attempts}, ${attempt.attempt})`,
              nextAttemptAt: outcome.nextAttemptAt,
              leaseOwner: null,
              leaseUntil: null,
            })
            .where(eq(webhookDeliveries.id, attempt.deliveryId))
            .returning({ webhookId: webhookDeliveries.webhookId })
            .get();
          if (!delivery) return;
          tx.update(webhooks)
            .set(
              outcome.disable
                ? { failureStreak: outcome.failureStreak, enabled: false }
                : { failureStreak: outcome.failureStreak },
            )
            .where(eq(webhooks.id, delivery.webhookId))
            .run();
        },
        { behavior: "immediate" },
      );
    },

    async listAttempts(tenantId, filter) {
      return db
        .select(webhookAttemptRecordColumns(webhookAttempts, webhookDeliveries))
        .from(webhookAttempts)
        .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId))
        .where(attemptListCondition(webhookDeliveries, tenantId, filter))
        .orderBy(desc(webhookAttempts.attemptedAt), desc(webhookAttempts.id))
        .limit(filter.limit)
        .all();
    },

    async getDelivery(tenantId, id) {
      return (
        db
          .select(deliveryRecord)
          .from(webhookDeliveries)
          .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.tenantId, tenantId)))
          .get() ?? null
      );
    },

    async claimDelivery(id, owner, leaseUntil, now) {
      const claimed = db
        .update(webhookDeliveries)
        .set({ leaseOwner: owner, leaseUntil })
        .where(and(eq(webhookDeliveries.id, id), deliveryClaimable(webhookDeliveries, now)))
        .returning({ id: webhookDeliveries.id })
        .get();
      return claimed !== undefined;
    },

    async requeue(id, at) {
      db.update(webhookDeliveries)
        .set({ status: "pending", nextAttemptAt: at, leaseOwner: null, leaseUntil: null })
        .where(eq(webhookDeliveries.id, id))
        .run();
    },

    async allEncryptedSecrets() {
      return db
        .select({ id: webhooks.id, encryptedSecret: webhooks.encryptedSecret })
        .from(webhooks)
        .where(live)
        .orderBy(asc(webhooks.id))
        .all();
    },

    async updateEncryptedSecret(id, encryptedSecret) {
      db.update(webhooks).set({ encryptedSecret }).where(eq(webhooks.id, id)).run();
    },
  };
};
