import { type AnyColumn, and, eq, isNull, lte, or, type SQL } from "drizzle-orm";
import { pickColumns } from "./pick-columns.ts";

/** The columns of a webhooks table (either dialect) that a WebhookRecord reads. */
interface WebhookTable {
  id: AnyColumn;
  tenantId: AnyColumn;
  environmentId: AnyColumn;
  url: AnyColumn;
  encryptedSecret: AnyColumn;
  events: AnyColumn;
  enabled: AnyColumn;
  failureStreak: AnyColumn;
  createdAt: AnyColumn;
  deletedAt: AnyColumn;
}

interface WebhookAttemptTable {
  id: AnyColumn;
  deliveryId: AnyColumn;
  attempt: AnyColumn;
  attemptedAt: AnyColumn;
  responseStatus: AnyColumn;
  latencyMs: AnyColumn;
  error: AnyColumn;
}

interface WebhookDeliveryTable {
  tenantId: AnyColumn;
  webhookId: AnyColumn;
  runId: AnyColumn;
  eventType: AnyColumn;
  leaseOwner: AnyColumn;
  leaseUntil: AnyColumn;
}

const WEBHOOK_KEY_COLUMNS = ["id", "tenantId", "environmentId"] as const;
const WEBHOOK_RECORD_COLUMNS = [
  "url",
  "encryptedSecret",
  "events",
  "enabled",
  "failureStreak",
  "createdAt",
] as const;

/** A WebhookRecord's select: the webhook's columns plus its environment's name (joined). */
export const webhookRecordColumns = <W extends WebhookTable, E extends { name: AnyColumn }>(
  webhooks: W,
  environments: E,
): Pick<W, (typeof WEBHOOK_KEY_COLUMNS)[number] | (typeof WEBHOOK_RECORD_COLUMNS)[number]> & {
  environment: E["name"];
} => ({
  // The record's key order: the environment's name follows its id.
  ...pickColumns(webhooks, WEBHOOK_KEY_COLUMNS),
  environment: environments.name,
  ...pickColumns(webhooks, WEBHOOK_RECORD_COLUMNS),
});

const ATTEMPT_COLUMNS = [
  "id",
  "deliveryId",
  "attempt",
  "attemptedAt",
  "responseStatus",
  "latencyMs",
  "error",
] as const;
const ATTEMPT_DELIVERY_COLUMNS = ["webhookId", "runId", "eventType"] as const;

/** A WebhookAttemptRecord's select: the attempt plus its delivery's webhook, run and event (joined). */
export const webhookAttemptRecordColumns = <A extends WebhookAttemptTable, D extends WebhookDeliveryTable>(
  attempts: A,
  deliveries: D,
): Pick<A, (typeof ATTEMPT_COLUMNS)[number]> & Pick<D, (typeof ATTEMPT_DELIVERY_COLUMNS)[number]> => ({
  ...pickColumns(attempts, ATTEMPT_COLUMNS),
  ...pickColumns(deliveries, ATTEMPT_DELIVERY_COLUMNS),
});

/** Deleted webhooks stay as rows (their deliveries and attempts point at them) but are hidden. */
export const liveWebhook = (webhooks: Pick<WebhookTable, "deletedAt">): SQL => isNull(webhooks.deletedAt);

/** The delivery is not being sent by an instance right now (no lease, or a lapsed one). */
export const deliveryLeaseFree = (
  deliveries: Pick<WebhookDeliveryTable, "leaseOwner" | "leaseUntil">,
  now: Date,
): SQL | undefined => or(isNull(deliveries.leaseOwner), lte(deliveries.leaseUntil, now));

/** The delivery may be claimed for sending `now`: pending, due, and not leased. */
export const deliveryClaimable = (
  deliveries: Pick<WebhookDeliveryTable, "leaseOwner" | "leaseUntil"> & {
    status: AnyColumn;
    nextAttemptAt: AnyColumn;
  },
  now: Date,
): SQL | undefined =>
  and(
    eq(deliveries.status, "pending"),
    lte(deliveries.nextAttemptAt, now),
    deliveryLeaseFree(deliveries, now),
  );

/** A tenant's delivery attempts narrowed by the filter (webhook, run), through their deliveries. */
export const attemptListCondition = (
  deliveries: Pick<WebhookDeliveryTable, "tenantId" | "webhookId" | "runId">,
  tenantId: string,
  filter: { webhookId?: string; runId?: string },
): SQL | undefined =>
  and(
    eq(deliveries.tenantId, tenantId),
    filter.webhookId === undefined ? undefined : eq(deliveries.webhookId, filter.webhookId),
    filter.runId === undefined ? undefined : eq(deliveries.runId, filter.runId),
  );
