import type { Webhook } from "@promptrun/contract";
import type { WebhookRecord } from "../ports.ts";

/** The public view of a webhook: never its secret. */
export const toWebhook = (record: WebhookRecord): Webhook => ({
  id: record.id,
  environment: record.environment,
  url: record.url,
  events: [...record.events],
  enabled: record.enabled,
  failureStreak: record.failureStreak,
  createdAt: record.createdAt.toISOString(),
});
