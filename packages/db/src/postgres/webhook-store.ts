import type { WebhookDeliveryRecord, WebhookRecord, WebhookStore } from "@promptrun/core";
import { and, asc, desc, eq, getTableColumns, sql } from "drizzle-orm";
import {
  environments,
  webhookAttempts,
  webhookDeliveries,
  webhookEvents,
  webhookPayloads,
  webhooks,
} from "../schema/postgres.ts";
import { recordColumns } from "../schema/record-columns.ts";
import {
  attemptListCondition,
  deliveryClaimable,
  liveWebhook,
  webhookAttemptRecordColumns,
  webhookRecordColumns,
} from "../shared/webhook-columns.ts";
import { dueDeliveriesQuery, dueRankFields, payloadQuery } from "../shared/webhook-queries.ts";
import type { PostgresContext } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";
import { insertDeliveries } from "./run-store.ts";

const webhookColumns = webhookRecordColumns(webhooks, environments);

/** A WebhookDeliveryState's columns (the lease columns stay out of it; the body lives in webhook_payloads). */
const deliveryRecord = recordColumns(getTableColumns(webhookDeliveries));

const live = liveWebhook(webhooks);

export const createWebhookStore = ({ db, clock }: PostgresContext): WebhookStore => {
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

  return {
    async create(webhook: WebhookRecord) {
      const { environment: _name, ...row } = webhook;
      await withConstraintErrors("webhook", () => db.insert(webhooks).values(row));
    },

    async get(tenantId, id) {
      const [row] = await selectWebhooks().where(
        and(eq(webhooks.id, id), eq(webhooks.tenantId, tenantId), live),
      );
      return row ?? null;
    },

    async list(tenantId) {
      return selectWebhooks()
        .where(and(eq(webhooks.tenantId, tenantId), live))
        .orderBy(asc(webhooks.createdAt), asc(webhooks.id));
    },

    async listForEnvironment(environmentId) {
      return selectWebhooks()
        .where(and(eq(webhooks.environmentId, environmentId), live))
        .orderBy(asc(webhooks.createdAt), asc(webhooks.id));
    },

    async setEnabled(id, enabled) {
      // Re-enabling starts a fresh failure streak.
      await db
        .update(webhooks)
        .set(enabled ? { enabled, failureStreak: 0 } : { enabled })
        .where(and(eq(webhooks.id, id), live));
    },

    async delete(tenantId, id) {
      // A soft delete keeps the delivery history. The secret is erased, and pending deliveries,
      // which have nowhere to go now, end failed.
      return db.transaction(async (tx) => {
        const [deleted] = await tx
          .update(webhooks)
          .set({ deletedAt: clock.now(), enabled: false, encryptedSecret: "" })
          .where(and(eq(webhooks.id, id), eq(webhooks.tenantId, tenantId), live))
          .returning({ id: webhooks.id });
        if (!deleted) return false;
        await tx
          .update(webhookDeliveries)
          .set({ status: "failed", nextAttemptAt: null })
          .where(and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.status, "pending")));
        return true;
      });
    },

    async enqueueDeliveries(deliveries: WebhookDeliveryRecord[]) {
      if (deliveries.length === 0) return;
      await withConstraintErrors("webhook delivery", () =>
        db.transaction((tx) => insertDeliveries(tx, deliveries)),
      );
    },

    async getEventPayload(eventId) {
      const select = db.select({ payload: webhookEvents.payload }).from(webhookEvents);
      const [row] = await select.where(eq(webhookEvents.id, eventId));
      return row?.payload ?? null;
    },

    async getPayload(runId, eventType) {
      const select = db.select({ payload: webhookPayloads.payload }).from(webhookPayloads).$dynamic();
      const [row] = await payloadQuery(select, webhookPayloads, runId, eventType);
      return row?.payload ?? null;
    },

    async dueDeliveries(now, limit, options) {
      return dueDeliveriesQuery(dueSelects, now, limit, options?.perWebhook);
    },

    async recordAttempt(attempt, outcome) {
      await db.transaction(async (tx) => {
        await withConstraintErrors("webhook attempt", () => tx.insert(webhookAttempts).values(attempt));
        const [delivery] = await tx
          .update(webhookDeliveries)
          .set({
            status: outcome.status,
            attempts: sql`greatest(${webhookDeliveries.attempts}, ${attempt.attempt})`,
            nextAttemptAt: outcome.nextAttemptAt,
            leaseOwner: null,
            leaseUntil: null,
          })
          .where(eq(webhookDeliveries.id, attempt.deliveryId))
          .returning({ webhookId: webhookDeliveries.webhookId });
        if (!delivery) return;
        await tx
          .update(webhooks)
          .set(
            outcome.disable
              ? { failureStreak: outcome.failureStreak, enabled: false }
              : { failureStreak: outcome.failureStreak },
          )
          .where(eq(webhooks.id, delivery.webhookId));
      });
    },

    async listAttempts(tenantId, filter) {
      return db
        .select(webhookAttemptRecordColumns(webhookAttempts, webhookDeliveries))
        .from(webhookAttempts)
        .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId))
        .where(attemptListCondition(webhookDeliveries, tenantId, filter))
        .orderBy(desc(webhookAttempts.attemptedAt), desc(webhookAttempts.id))
        .limit(filter.limit);
    },

    async getDelivery(tenantId, id) {
      const [row] = await db
        .select(deliveryRecord)
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.tenantId, tenantId)));
      return row ?? null;
    },

    async claimDelivery(id, owner, leaseUntil, now) {
      const [claimed] = await db
        .update(webhookDeliveries)
        .set({ leaseOwner: owner, leaseUntil })
        .where(and(eq(webhookDeliveries.id, id), deliveryClaimable(webhookDeliveries, now)))
        .returning({ id: webhookDeliveries.id });
      return claimed !== undefined;
    },

    async requeue(id, at) {
      await db
        .update(webhookDeliveries)
        .set({ status: "pending", nextAttemptAt: at, leaseOwner: null, leaseUntil: null })
        .where(eq(webhookDeliveries.id, id));
    },

    async allEncryptedSecrets() {
      return db
        .select({ id: webhooks.id, encryptedSecret: webhooks.encryptedSecret })
        .from(webhooks)
        .where(live)
        .orderBy(asc(webhooks.id));
    },

    async updateEncryptedSecret(id, encryptedSecret) {
      await db.update(webhooks).set({ encryptedSecret }).where(eq(webhooks.id, id));
    },
  };
};
