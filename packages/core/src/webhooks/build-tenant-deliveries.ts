import type { PromptTagMovedData, PromptVersionCreatedData, WebhookEventType } from "@promptrun/contract";
import type { Clock, Store, WebhookDeliveryRecord, WebhookRecord } from "../ports.ts";

export type PromptWebhookEvent =
  | { type: "prompt.version.created"; data: PromptVersionCreatedData }
  | { type: "prompt.tag.moved"; data: PromptTagMovedData };

/** An event of the whole tenant (not of one run): prompt events, document events. */
export interface TenantWebhookEvent {
  type: WebhookEventType;
  data: unknown;
}

/**
 * Reads the tenant's enabled webhooks once and returns a synchronous builder of the outbox rows
 * for tenant-wide events (prompt and document events): one per enabled webhook of any of its
 * environments that names the event in its events (docs/PRODUCT-RULES.md "Environments, env vars
 * and webhooks"). Each event gets its own id (the deliveries' eventId), its body fixed when built.
 * The store calls the builder inside the write's transaction, so the rows commit with the write.
 */
export async function tenantEventDeliveryBuilder(
  dependencies: { store: Pick<Store, "webhooks">; clock: Clock; newId: () => string },
  tenantId: string,
): Promise<(events: TenantWebhookEvent[]) => WebhookDeliveryRecord[]> {
  const { store, clock, newId } = dependencies;
  const webhooks = (await store.webhooks.list(tenantId)).filter((webhook) => webhook.enabled);
  const subscribed = (type: WebhookEventType) =>
    webhooks.filter((webhook) => webhook.tenantId === tenantId && webhook.events.includes(type));
  return (events) => {
    const now = clock.now();
    return events.flatMap((event) =>
      eventDeliveries(subscribed(event.type), tenantId, event, { now, newId }),
    );
  };
}

/**
 * The outbox rows of one event of the tenant (not of one run) to the given webhooks: one event
 * id, one body (`timestamp` default: now), one row per webhook.
 */
export function eventDeliveries(
  receivers: readonly WebhookRecord[],
  tenantId: string,
  event: TenantWebhookEvent,
  options: { now: Date; newId: () => string; timestamp?: Date },
): WebhookDeliveryRecord[] {
  if (receivers.length === 0) return [];
  const { now, newId } = options;
  const eventId = newId();
  const timestamp = (options.timestamp ?? now).toISOString();
  const payload = JSON.stringify({ type: event.type, timestamp, data: event.data });
  return receivers.map((webhook) => ({
    id: newId(),
    webhookId: webhook.id,
    tenantId,
    runId: null,
    eventId,
    eventType: event.type,
    payload,
    status: "pending" as const,
    attempts: 0,
    nextAttemptAt: now,
    createdAt: now,
  }));
}
