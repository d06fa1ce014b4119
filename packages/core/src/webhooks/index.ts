export { buildDeliveries } from "./build-deliveries.ts";
export { type AttemptOutcome, planNextAttempt } from "./plan-next-attempt.ts";
export { type SendResult, sendDelivery } from "./send-delivery.ts";
export { toWebhook } from "./to-webhook.ts";
export {
  createWebhookDispatcher,
  type WebhookDispatcher,
  type WebhookDispatcherDependencies,
} from "./webhook-dispatcher.ts";
export { generateWebhookSecret } from "./webhook-secret.ts";
export { createWebhookService, type WebhookServiceDependencies } from "./webhook-service.ts";
