import type { WebhookEventType } from "@promptrun/contract";
import type { WebhookDeliveryRecord, WebhookDeliveryState } from "@promptrun/core";

export interface WebhookPayloadRow {
  runId: string;
  eventType: WebhookEventType;
  tenantId: string;
  payload: string;
  createdAt: Date;
}

/**
 * Outbox rows as stored: each run event's body once (the webhook_payloads row), and the
 * deliveries without it; they find it again by (run_id, event_type).
 */
export const splitOutbox = (
  deliveries: WebhookDeliveryRecord[],
): { payloads: WebhookPayloadRow[]; rows: WebhookDeliveryState[] } => {
  const payloads = new Map<string, WebhookPayloadRow>();
  const rows: WebhookDeliveryState[] = [];
  for (const { payload, ...row } of deliveries) {
    const key = `${row.runId} ${row.eventType}`;
    if (!payloads.has(key)) {
      payloads.set(key, {
        runId: row.runId,
        eventType: row.eventType,
        tenantId: row.tenantId,
        payload,
        createdAt: row.createdAt,
      });
    }
    rows.push(row);
  }
  return { payloads: [...payloads.values()], rows };
};
