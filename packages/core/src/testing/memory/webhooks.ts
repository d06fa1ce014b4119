import type {
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookDeliveryState,
  WebhookRecord,
  WebhookStore,
} from "../../ports.ts";
import { copy } from "./paging.ts";
import { duplicate, type MemoryReferences, requireReference } from "./references.ts";

const byCreatedAt = <T extends { createdAt: Date; id: string }>(a: T, b: T) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface MemoryWebhookStore extends WebhookStore {
  /** Synchronous insert, so the run store can write the outbox in the same "transaction". */
  insertDeliveries(deliveries: WebhookDeliveryRecord[]): void;
  /** Throws what insertDeliveries would throw, writing nothing (a prompt write checks first). */
  checkDeliveries(deliveries: WebhookDeliveryRecord[]): void;
  /** The encrypted secret as stored, deleted rows included ("" once deleted; null: no such row). */
  storedSecret(id: string): string | null;
}

export function createMemoryWebhookStore(references: MemoryReferences): MemoryWebhookStore {
  const webhooks = new Map<string, WebhookRecord>();
  const deliveries = new Map<string, WebhookDeliveryState>();
  /** `runId eventType` → the body, stored once per run event. */
  const payloads = new Map<string, string>();
  const payloadKey = (runId: string, eventType: string) => `${runId} ${eventType}`;
  const attempts: WebhookAttemptRecord[] = [];
  /** Deleted webhooks keep their row (history points at it) with the secret erased. */
  const deletedIds = new Set<string>();
  /** deliveryId → lease (the SQL stores' lease columns). */
  const leases = new Map<string, { owner: string; until: Date }>();
  const leaseFree = (id: string, now: Date) => {
    const lease = leases.get(id);
    return lease === undefined || lease.until.getTime() <= now.getTime();
  };

  /** Throws what inserting `rows` would throw (the SQL stores' keys), writing nothing. */
  const checkDeliveries = (rows: WebhookDeliveryRecord[]) => {
    for (const row of rows) {
      if (deliveries.has(row.id)) throw duplicate(`webhook delivery ${row.id}`);
      requireReference(
        (row.runId === null ? row.eventId !== null : references.run(row.runId)) &&
          (webhooks.has(row.webhookId) || deletedIds.has(row.webhookId)),
        `webhook delivery ${row.id}`,
      );
    }
  };

  const insertDeliveries = (rows: WebhookDeliveryRecord[]) => {
    checkDeliveries(rows);
    for (const { payload, ...row } of rows) {
      const key = row.eventId !== null ? row.eventId : payloadKey(row.runId ?? "", row.eventType);
      if (!payloads.has(key)) payloads.set(key, payload);
      deliveries.set(row.id, copy(row));
    }
  };

  return {
    checkDeliveries,
    insertDeliveries,
    storedSecret(id) {
      if (deletedIds.has(id)) return "";
      return webhooks.get(id)?.encryptedSecret ?? null;
    },
    async create(webhook) {
      if (webhooks.has(webhook.id) || deletedIds.has(webhook.id)) throw duplicate(`webhook ${webhook.id}`);
      requireReference(references.environment(webhook.environmentId), `webhook ${webhook.id}`);
      webhooks.set(webhook.id, copy(webhook));
    },
    async get(tenantId, id) {
      const webhook = webhooks.get(id);
      return webhook && webhook.tenantId === tenantId ? copy(webhook) : null;
    },
    async list(tenantId) {
      return [...webhooks.values()]
        .filter((webhook) => webhook.tenantId === tenantId)
        .sort(byCreatedAt)
        .map(copy);
    },
    async listForEnvironment(environmentId) {
      return [...webhooks.values()]
        .filter((webhook) => webhook.environmentId === environmentId)
        .sort(byCreatedAt)
        .map(copy);
    },
    async setEnabled(id, enabled) {
      const webhook = webhooks.get(id);
      if (!webhook) return;
      webhook.enabled = enabled;
      // Re-enabling starts a fresh streak.
      if (enabled) webhook.failureStreak = 0;
    },
    async delete(tenantId, id) {
      const webhook = webhooks.get(id);
      if (!webhook || webhook.tenantId !== tenantId) return false;
      webhooks.delete(id);
      deletedIds.add(id);
      // Pending deliveries of a deleted webhook have nowhere to go.
      for (const delivery of deliveries.values()) {
        if (delivery.webhookId === id && delivery.status === "pending") {
          delivery.status = "failed";
          delivery.nextAttemptAt = null;
        }
      }
      return true;
    },
    async enqueueDeliveries(rows) {
      insertDeliveries(rows);
    },
    async dueDeliveries(now, limit, options) {
      const perWebhook = options?.perWebhook ?? Number.POSITIVE_INFINITY;
      const taken = new Map<string, number>();
      return [...deliveries.values()]
        .filter(
          (delivery) =>
            delivery.status === "pending" &&
            webhooks.has(delivery.webhookId) &&
            delivery.nextAttemptAt !== null &&
            delivery.nextAttemptAt.getTime() <= now.getTime() &&
            leaseFree(delivery.id, now),
        )
        .sort(
          (a, b) =>
            (a.nextAttemptAt?.getTime() ?? 0) - (b.nextAttemptAt?.getTime() ?? 0) || byCreatedAt(a, b),
        )
        .filter((delivery) => {
          const count = (taken.get(delivery.webhookId) ?? 0) + 1;
          taken.set(delivery.webhookId, count);
          return count <= perWebhook;
        })
        .slice(0, limit)
        .map(copy);
    },
    async getEventPayload(eventId) {
      return payloads.get(eventId) ?? null;
    },
    async getPayload(runId, eventType) {
      return payloads.get(payloadKey(runId, eventType)) ?? null;
    },
    async recordAttempt(attempt, outcome) {
      attempts.push(copy(attempt));
      const delivery = deliveries.get(attempt.deliveryId);
      if (!delivery) return;
      leases.delete(delivery.id);
      delivery.status = outcome.status;
      delivery.attempts = Math.max(delivery.attempts, attempt.attempt);
      delivery.nextAttemptAt = outcome.nextAttemptAt;
      const webhook = webhooks.get(delivery.webhookId);
      if (webhook) {
        webhook.failureStreak = outcome.failureStreak;
        if (outcome.disable) webhook.enabled = false;
      }
    },
    async listAttempts(tenantId, filter) {
      return attempts
        .flatMap((attempt) => {
          const delivery = deliveries.get(attempt.deliveryId);
          if (!delivery || delivery.tenantId !== tenantId) return [];
          if (filter.webhookId !== undefined && delivery.webhookId !== filter.webhookId) return [];
          if (filter.runId !== undefined && delivery.runId !== filter.runId) return [];
          return [
            {
              ...copy(attempt),
              webhookId: delivery.webhookId,
              runId: delivery.runId,
              eventType: delivery.eventType,
            },
          ];
        })
        .sort(
          (a, b) =>
            b.attemptedAt.getTime() - a.attemptedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
        )
        .slice(0, filter.limit);
    },
    async getDelivery(tenantId, id) {
      const delivery = deliveries.get(id);
      return delivery && delivery.tenantId === tenantId ? copy(delivery) : null;
    },
    async claimDelivery(id, owner, leaseUntil, now) {
      const delivery = deliveries.get(id);
      if (
        delivery?.status !== "pending" ||
        !webhooks.has(delivery.webhookId) ||
        delivery.nextAttemptAt === null ||
        delivery.nextAttemptAt.getTime() > now.getTime() ||
        !leaseFree(id, now)
      )
        return false;
      leases.set(id, { owner, until: leaseUntil });
      return true;
    },
    async requeue(id, at) {
      const delivery = deliveries.get(id);
      if (!delivery) return;
      leases.delete(id);
      delivery.status = "pending";
      delivery.nextAttemptAt = at;
    },
    async allEncryptedSecrets() {
      return [...webhooks.values()].map((webhook) => ({
        id: webhook.id,
        encryptedSecret: webhook.encryptedSecret,
      }));
    },
    async updateEncryptedSecret(id, encryptedSecret) {
      const webhook = webhooks.get(id);
      if (webhook) webhook.encryptedSecret = encryptedSecret;
    },
  };
}
