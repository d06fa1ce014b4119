import type { WebhookEventType } from "@promptrun/contract";
import type { Clock, RunRecord, Store, WebhookDeliveryRecord } from "../ports.ts";
import { toPromptRun } from "../services/to-prompt-run.ts";

/**
 * The outbox rows for a run that just ended, or just paused for tool outputs: one per enabled
 * webhook of the run's environment subscribed to its event. The engine writes them in the same
 * transaction as the run's end (or pause); the payload is fixed here, so every attempt sends the
 * same bytes under the same `webhook-id`. A run ends once, so its end's body is stored once per
 * (run, event); it may pause several times, so each pause is an event of its own (`eventId`).
 */
export async function buildDeliveries(
  dependencies: { store: Pick<Store, "environments" | "webhooks">; clock: Clock; newId: () => string },
  run: RunRecord,
): Promise<WebhookDeliveryRecord[]> {
  const paused = run.status === "pending" && run.pause !== null;
  if (run.status === "pending" && !paused) return [];
  const { store, clock, newId } = dependencies;
  const environment = await store.environments.get(run.tenantId, run.environment);
  if (!environment) return [];
  const type: WebhookEventType = paused
    ? "run.requires_action"
    : run.status === "completed"
      ? "run.completed"
      : "run.failed";
  const webhooks = (await store.webhooks.listForEnvironment(environment.id)).filter(
    (webhook) => webhook.enabled && webhook.tenantId === run.tenantId && webhook.events.includes(type),
  );
  if (webhooks.length === 0) return [];
  const now = clock.now();
  const eventId = paused ? newId() : null;
  const payload = JSON.stringify({
    type,
    timestamp: (run.finishedAt ?? now).toISOString(),
    data: toPromptRun(run),
  });
  return webhooks.map((webhook) => ({
    id: newId(),
    webhookId: webhook.id,
    tenantId: run.tenantId,
    runId: run.id,
    eventId,
    eventType: type,
    payload,
    status: "pending",
    attempts: 0,
    nextAttemptAt: now,
    createdAt: now,
  }));
}
