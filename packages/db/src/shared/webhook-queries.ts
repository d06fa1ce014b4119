import type { WebhookEventType } from "@promptrun/contract";
import { type AnyColumn, and, asc, eq, lte, type SQL, type Subquery, sql } from "drizzle-orm";
import { deliveryClaimable, liveWebhook } from "./webhook-columns.ts";

/**
 * The outbox's reads, written once for both stores. drizzle types its query builders per dialect,
 * so each store starts the select (`db.select(…).from(…).$dynamic()`) and runs the query these
 * functions finish: SQLite with `.all()` / `.get()`, Postgres by awaiting it.
 */

/**
 * A dynamic drizzle select of either dialect, as these reads use it: each step returns the query
 * itself. `J` is what it may join (the dialect's tables and subqueries).
 */
export interface DynamicSelect<Q, J = never> {
  innerJoin(table: J, on: SQL): Q;
  where(where: SQL | undefined): Q;
  orderBy(...columns: SQL[]): Q;
  limit(limit: number): Q;
}

interface WebhookPayloadTable {
  runId: AnyColumn;
  eventType: AnyColumn;
}

/** The body of a run event's deliveries: `select` is the dialect's select from webhook_payloads. */
export const payloadQuery = <Q extends Pick<DynamicSelect<Q>, "where">>(
  select: Q,
  webhookPayloads: WebhookPayloadTable,
  runId: string,
  eventType: WebhookEventType,
): Q => select.where(and(eq(webhookPayloads.runId, runId), eq(webhookPayloads.eventType, eventType)));

interface WebhookDeliveryTable {
  id: AnyColumn;
  webhookId: AnyColumn;
  status: AnyColumn;
  nextAttemptAt: AnyColumn;
  createdAt: AnyColumn;
  leaseOwner: AnyColumn;
  leaseUntil: AnyColumn;
}

/** A delivery's id and its rank among its webhook's, in the outbox's order (see outboxOrder). */
export const dueRankFields = <D extends WebhookDeliveryTable>(deliveries: D) => ({
  id: deliveries.id as D["id"],
  rank: sql<number>`row_number() over (partition by ${deliveries.webhookId} order by ${deliveries.nextAttemptAt}, ${deliveries.createdAt}, ${deliveries.id})`.as(
    "rank",
  ),
});

/** That ranking of the due deliveries, as the subquery "ranked". */
type RankedDue = Subquery & { id: AnyColumn; rank: SQL.Aliased<number> };

/**
 * The tables of the outbox's due reads (`W` is the dialect's webhooks table), and how the dialect
 * starts its selects from webhook_deliveries.
 */
export interface DueDeliverySelects<Q, R, W> {
  webhooks: W;
  webhookDeliveries: WebhookDeliveryTable;
  /** select <a WebhookDeliveryState's columns> from webhook_deliveries */
  deliveryRecords(): Q;
  /** select <dueRankFields(webhook_deliveries)> from webhook_deliveries */
  deliveryRanks(): R;
}

/** Pending, due, not leased, and its webhook not deleted. */
const dueCondition = (
  webhooks: { deletedAt: AnyColumn },
  deliveries: WebhookDeliveryTable,
  now: Date,
): SQL | undefined => and(deliveryClaimable(deliveries, now), liveWebhook(webhooks));

/** The outbox's order: the earliest due first, then the oldest. */
const outboxOrder = (deliveries: WebhookDeliveryTable): SQL[] => [
  asc(deliveries.nextAttemptAt),
  asc(deliveries.createdAt),
  asc(deliveries.id),
];

/**
 * The due deliveries (WebhookStore.dueDeliveries), oldest due first, at most `limit`; with
 * `perWebhook`, only each webhook's first `perWebhook` of them.
 */
export const dueDeliveriesQuery = <
  Q extends DynamicSelect<Q, NoInfer<W> | RankedDue>,
  R extends DynamicSelect<R, NoInfer<W>> & { as(alias: "ranked"): RankedDue },
  W extends { id: AnyColumn; deletedAt: AnyColumn },
>(
  selects: DueDeliverySelects<Q, R, W>,
  now: Date,
  limit: number,
  perWebhook?: number,
): Q => {
  const { webhooks, webhookDeliveries } = selects;
  const due = dueCondition(webhooks, webhookDeliveries, now);
  const ofItsWebhook = eq(webhooks.id, webhookDeliveries.webhookId);
  if (perWebhook === undefined) {
    return selects
      .deliveryRecords()
      .innerJoin(webhooks, ofItsWebhook)
      .where(due)
      .orderBy(...outboxOrder(webhookDeliveries))
      .limit(limit);
  }
  // Each webhook's first `perWebhook` due deliveries, ranked in the outbox's order.
  const ranked = selects.deliveryRanks().innerJoin(webhooks, ofItsWebhook).where(due).as("ranked");
  return selects
    .deliveryRecords()
    .innerJoin(ranked, eq(ranked.id, webhookDeliveries.id))
    .where(lte(ranked.rank, perWebhook))
    .orderBy(...outboxOrder(webhookDeliveries))
    .limit(limit);
};
