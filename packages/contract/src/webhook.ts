import { z } from "zod";
import { knowledgeDocumentSchema } from "./knowledge-base.ts";
import { promptRunSchema } from "./run.ts";
import { workflowRunSchema } from "./workflow.ts";

export const runWebhookEventTypeSchema = z.enum(["run.completed", "run.failed", "run.requires_action"]);
export const promptWebhookEventTypeSchema = z.enum(["prompt.version.created", "prompt.tag.moved"]);
/** A document of a knowledge base finished ingesting (docs/KNOWLEDGE.md); sent in every environment. */
export const documentWebhookEventTypeSchema = z.enum(["document.ready", "document.failed"]);
/** A workflow run ended (docs/WORKFLOWS.md); sent to the webhooks of the run's environment. */
export const workflowWebhookEventTypeSchema = z.enum(["workflow.completed", "workflow.failed"]);
export const webhookEventTypeSchema = z.enum([
  ...runWebhookEventTypeSchema.options,
  ...promptWebhookEventTypeSchema.options,
  ...documentWebhookEventTypeSchema.options,
  ...workflowWebhookEventTypeSchema.options,
]);
export type WorkflowWebhookEventType = z.infer<typeof workflowWebhookEventTypeSchema>;
export type DocumentWebhookEventType = z.infer<typeof documentWebhookEventTypeSchema>;
export type WebhookEventType = z.infer<typeof webhookEventTypeSchema>;
export type PromptWebhookEventType = z.infer<typeof promptWebhookEventTypeSchema>;

/** `data` of a prompt.version.created event: a push created this version. */
export const promptVersionCreatedDataSchema = z
  .object({ slug: z.string(), version: z.number().int().positive(), id: z.string() })
  .meta({ id: "PromptVersionCreatedData" });

/** `data` of a prompt.tag.moved event; previousVersion is null for a new tag. */
export const promptTagMovedDataSchema = z
  .object({
    slug: z.string(),
    tag: z.string(),
    version: z.number().int().positive(),
    previousVersion: z.number().int().positive().nullable(),
  })
  .meta({ id: "PromptTagMovedData" });
export type PromptVersionCreatedData = z.infer<typeof promptVersionCreatedDataSchema>;
export type PromptTagMovedData = z.infer<typeof promptTagMovedDataSchema>;

/** Body of a webhook delivery (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"). */
export const webhookPayloadSchema = z
  .discriminatedUnion("type", [
    z.object({ type: runWebhookEventTypeSchema, timestamp: z.iso.datetime(), data: promptRunSchema }),
    z.object({
      type: z.literal("prompt.version.created"),
      timestamp: z.iso.datetime(),
      data: promptVersionCreatedDataSchema,
    }),
    z.object({
      type: z.literal("prompt.tag.moved"),
      timestamp: z.iso.datetime(),
      data: promptTagMovedDataSchema,
    }),
    z.object({
      type: documentWebhookEventTypeSchema,
      timestamp: z.iso.datetime(),
      data: knowledgeDocumentSchema,
    }),
    z.object({
      type: workflowWebhookEventTypeSchema,
      timestamp: z.iso.datetime(),
      data: workflowRunSchema,
    }),
  ])
  .meta({ id: "WebhookPayload" });
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
