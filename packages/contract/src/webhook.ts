import { z } from "zod";
import { promptRunSchema } from "./run.ts";

export const webhookEventTypeSchema = z.enum(["run.completed", "run.failed"]);
export type WebhookEventType = z.infer<typeof webhookEventTypeSchema>;

/** Body of a webhook delivery (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"). */
export const webhookPayloadSchema = z
  .object({
    type: webhookEventTypeSchema,
    timestamp: z.iso.datetime(),
    data: promptRunSchema,
  })
  .meta({ id: "WebhookPayload" });
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
