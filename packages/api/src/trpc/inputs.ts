import { pageRequestSchema, slugSchema, uuidSchema, workflowFileSchema } from "@promptrun/contract";
import { z } from "zod";

/** Inputs of procedures the contract has no schema for (they take only ids and flags). */
export const idInputSchema = z.object({ id: uuidSchema });
export const webhookAttemptsInputSchema = z.object({
  webhookId: uuidSchema.optional(),
  runId: uuidSchema.optional(),
  limit: z.number().int().min(1).max(200).optional(),
});
export const webhookRedeliverInputSchema = z.object({ deliveryId: uuidSchema });
export const webhookSetEnabledInputSchema = z.object({ id: uuidSchema, enabled: z.boolean() });
export const tenantIdInputSchema = z.object({ tenantId: uuidSchema });
/** A full API key or a unique prefix of one (at least the displayed prefix). */
export const apiKeyRevokeInputSchema = z.object({ key: z.string().min(1).max(200) });
/** tRPC `workflow.push`: workflow files (YAML read by the caller), checked again by the service. */
export const workflowPushInputSchema = z.object({ files: z.array(workflowFileSchema).min(1).max(100) });
/** tRPC `workflow.versions`: the slug and a page. */
export const workflowVersionsInputSchema = pageRequestSchema.extend({ slug: slugSchema });
