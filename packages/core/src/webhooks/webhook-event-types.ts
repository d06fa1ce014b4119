import { webhookEventTypeSchema } from "@promptrun/contract";

/** Every event a webhook may name (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"). */
export const WEBHOOK_EVENT_TYPES: readonly string[] = webhookEventTypeSchema.options;
