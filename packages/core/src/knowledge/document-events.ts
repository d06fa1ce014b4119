import type { DocumentWebhookEventType } from "@promptrun/contract";
import type { Clock, Store, WebhookDeliveryRecord } from "../ports.ts";
import type { DocumentOutbox, DocumentRecord } from "./ports.ts";
import { toDocument } from "./to-document.ts";

/** Which event a document's end is: ready → document.ready, failed → document.failed; else none. */
const eventOf = (document: DocumentRecord): DocumentWebhookEventType | null =>
  document.status === "ready" ? "document.ready" : document.status === "failed" ? "document.failed" : null;

/**
 * Reads the tenant's enabled webhooks once and returns the synchronous DocumentOutbox the store
 * calls inside completeDocument/failDocument (docs/KNOWLEDGE.md "Ingestion"): one row per
 * enabled webhook of any environment that names the event, one eventId per event, the body
 * (`{type, timestamp, data: the document as presented}`) fixed when built. Modelled on
 * promptDeliveryBuilder (webhooks/build-prompt-deliveries.ts).
 */
export async function documentOutboxBuilder(
  dependencies: { store: Pick<Store, "webhooks">; clock: Clock; newId: () => string },
  tenantId: string,
): Promise<DocumentOutbox> {
  const { store, clock, newId } = dependencies;
  const webhooks = (await store.webhooks.list(tenantId)).filter(
    (webhook) => webhook.enabled && webhook.tenantId === tenantId,
  );
  return (document): WebhookDeliveryRecord[] => {
    const type = eventOf(document);
    if (type === null) return [];
    const receivers = webhooks.filter((webhook) => webhook.events.includes(type));
    if (receivers.length === 0) return [];
    const now = clock.now();
    const eventId = newId();
    const payload = JSON.stringify({ type, timestamp: now.toISOString(), data: toDocument(document) });
    return receivers.map((webhook) => ({
      id: newId(),
      webhookId: webhook.id,
      tenantId,
      runId: null,
      eventId,
      eventType: type,
      payload,
      status: "pending" as const,
      attempts: 0,
      nextAttemptAt: now,
      createdAt: now,
    }));
  };
}
