export { createWebhookDispatcher } from "./webhook-dispatcher.ts";
export { createWebhookService } from "./webhook-service.ts";
