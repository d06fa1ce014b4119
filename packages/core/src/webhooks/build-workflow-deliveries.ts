import type { WorkflowRun, WorkflowWebhookEventType } from "@promptrun/contract";
import type { Clock, Store, WebhookDeliveryRecord } from "../ports.ts";
import { eventDeliveries } from "./build-tenant-deliveries.ts";

/**
 * The outbox rows of a workflow run's end (docs/WORKFLOWS.md "Runs"): one per enabled webhook of
 * the run's environment that names the event, `runId` null and one `eventId` (the body stored
 * once), data the workflow run as the API shows it. Written by the advance that ends the run.
 */
export async function buildWorkflowDeliveries(
  dependencies: { store: Pick<Store, "environments" | "webhooks">; clock: Clock; newId: () => string },
  run: WorkflowRun & { tenantId: string },
): Promise<WebhookDeliveryRecord[]> {
  if (run.status === "pending") return [];
  const { store, clock, newId } = dependencies;
  const environment = await store.environments.get(run.tenantId, run.environment);
  if (!environment) return [];
  const type: WorkflowWebhookEventType =
    run.status === "completed" ? "workflow.completed" : "workflow.failed";
  const receivers = (await store.webhooks.listForEnvironment(environment.id)).filter(
    (webhook) => webhook.enabled && webhook.tenantId === run.tenantId && webhook.events.includes(type),
  );
  const { tenantId, ...data } = run;
  const now = clock.now();
  return eventDeliveries(
    receivers,
    tenantId,
    { type, data },
    {
      now,
      newId,
      ...(run.finishedAt ? { timestamp: new Date(run.finishedAt) } : {}),
    },
  );
}
