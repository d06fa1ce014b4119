import type { DocumentWebhookEventType } from "@promptrun/contract";
import { tenantEventDeliveryBuilder } from "../webhooks/build-tenant-deliveries.ts";
import type { DocumentOutbox, DocumentRecord } from "./ports.ts";
import { toDocument } from "./to-document.ts";

/** Which event a document's end is: ready → document.ready, failed → document.failed; else none. */
const eventOf = (document: DocumentRecord): DocumentWebhookEventType | null =>
  document.status === "ready" ? "document.ready" : document.status === "failed" ? "document.failed" : null;

/**
 * The synchronous DocumentOutbox the store calls inside completeDocument/failDocument
 * (docs/KNOWLEDGE.md "Ingestion"): the tenant-wide event builder's rows for the document's
 * event (every enabled webhook of the tenant that names it), the body's data the document as
 * presented. The tenant's webhooks are read once, before the store's transaction.
 */
export async function documentOutboxBuilder(
  dependencies: Parameters<typeof tenantEventDeliveryBuilder>[0],
  tenantId: string,
): Promise<DocumentOutbox> {
  const build = await tenantEventDeliveryBuilder(dependencies, tenantId);
  return (document) => {
    const type = eventOf(document);
    return type === null ? [] : build([{ type, data: toDocument(document) }]);
  };
}
