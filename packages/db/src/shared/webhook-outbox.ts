import type { WebhookEventType } from "@promptrun/contract";
import type { WebhookDeliveryRecord, WebhookDeliveryState } from "@promptrun/core";

export interface WebhookPayloadRow {
  runId: string;
  eventType: WebhookEventType;
  tenantId: string;
  payload: string;
  createdAt: Date;
}

/** A prompt event's body (the webhook_events row). */
export interface WebhookEventRow {
  id: string;
  eventType: WebhookEventType;
  tenantId: string;
  payload: string;
  createdAt: Date;
}

/**
 * Outbox rows as stored: each run event's body once (the webhook_payloads row, found again by
 * (run_id, event_type)), each prompt event's body once (the webhook_events row, by event_id), and
 * the deliveries without it.
 */
export const splitOutbox = (
  deliveries: WebhookDeliveryRecord[],
): { payloads: WebhookPayloadRow[]; events: WebhookEventRow[]; rows: WebhookDeliveryState[] } => {
  const payloads = new Map<string, WebhookPayloadRow>();
  const events = new Map<string, WebhookEventRow>();
  const rows: WebhookDeliveryState[] = [];
  for (const { payload, ...row } of deliveries) {
    const { tenantId, eventType, createdAt } = row;
    if (row.eventId !== null) {
      if (!events.has(row.eventId))
        events.set(row.eventId, { id: row.eventId, eventType, tenantId, payload, createdAt });
    } else if (row.runId !== null) {
      const key = `${row.runId} ${eventType}`;
      if (!payloads.has(key))
        payloads.set(key, { runId: row.runId, eventType, tenantId, payload, createdAt });
    }
    rows.push(row);
  }
  return { payloads: [...payloads.values()], events: [...events.values()], rows };
};
