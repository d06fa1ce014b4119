import type { WebhookEventType } from "@promptrun/contract";

/** Every event a webhook can subscribe to, with what sends it (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"). */
export const webhookEvents: Record<WebhookEventType, string> = {
  "run.completed": "a run of this environment succeeded",
  "run.failed": "a run of this environment failed",
  "run.requires_action": "a run of this environment paused for client tool outputs (once per pause)",
  "prompt.version.created": "a push created a prompt version (any environment)",
  "prompt.tag.moved": "a tag now points at another version (any environment)",
  "document.ready": "a knowledge base document finished ingesting (any environment)",
  "document.failed": "a knowledge base document could not be ingested (any environment)",
  "workflow.completed": "a workflow run of this environment succeeded",
  "workflow.failed": "a workflow run of this environment failed (or was cancelled)",
};

export const webhookEventTypes = Object.keys(webhookEvents) as WebhookEventType[];

/** What a webhook created without a choice receives. */
export const defaultWebhookEvents: WebhookEventType[] = ["run.completed", "run.failed"];
