import { z } from "zod";
import { environmentNameSchema, slugSchema, tagSchema, uuidSchema } from "./ids.ts";
import { refusingProtoKey } from "./own-keys.ts";
import { pageRequestSchema } from "./pagination.ts";
import { promptFileSchema } from "./prompt.ts";
import { createRunRequestSchema, idempotencyKeySchema, submitToolOutputsRequestSchema } from "./run.ts";
import { runListFiltersSchema } from "./run-list.ts";
import { webhookEventTypeSchema } from "./webhook.ts";

/** Inputs of the tRPC procedures; outputs reuse the REST resource schemas. */
export const promptGetInputSchema = z.object({
  slug: slugSchema,
  version: z.string().min(1).max(200).default("latest"),
});
export const promptVersionsInputSchema = pageRequestSchema.extend({ slug: slugSchema });
export const promptPushInputSchema = z.object({ files: z.array(promptFileSchema).min(1).max(100) });
/** With `expectedVersion` (a number, or null: the tag must not exist) the move is guarded and `version` must be a number. */
export const promptTagInputSchema = z.object({
  slug: slugSchema,
  version: z.string().min(1).max(200),
  tag: tagSchema,
  expectedVersion: z.number().int().positive().nullable().optional(),
});
export const promptUntagInputSchema = z.object({ slug: slugSchema, tag: tagSchema });
export const promptTagHistoryInputSchema = pageRequestSchema.extend({ slug: slugSchema, tag: tagSchema });

export const runCreateInputSchema = createRunRequestSchema.extend({
  slug: slugSchema,
  version: z.string().min(1).max(200),
  idempotencyKey: idempotencyKeySchema.optional(),
});
export const runGetInputSchema = z.object({ id: uuidSchema });
/** tRPC run.submitToolOutputs: the run beside the REST body. */
export const runSubmitToolOutputsInputSchema = submitToolOutputsRequestSchema.extend({
  id: uuidSchema,
  idempotencyKey: idempotencyKeySchema.optional(),
});
/** The REST list's filters and page; `slug` is kept as another name of `prompt`. */
export const runListInputSchema = pageRequestSchema.extend({
  ...runListFiltersSchema.shape,
  slug: slugSchema.optional(),
});

/** Messages are paged oldest first: `limit` (1–200, default 50) and the `nextCursor` of the last page. */
export const threadGetInputSchema = pageRequestSchema.extend({ id: uuidSchema });
export const threadMessageSchema = z.object({
  role: z.enum(["user", "assistant", "tool"]),
  content: z.string(),
  /** null for an imported message (docs/PRODUCT-RULES.md "Thread memory"). */
  runId: uuidSchema.nullable(),
  createdAt: z.iso.datetime(),
});
export type ThreadMessage = z.infer<typeof threadMessageSchema>;
export const threadSchema = z.object({
  id: uuidSchema,
  createdAt: z.iso.datetime(),
  /** This page's messages by channel, oldest first. */
  channels: z.record(z.string(), z.array(threadMessageSchema)),
  /** More messages follow: pass it as `cursor`; null on the last page. */
  nextCursor: z.string().nullable(),
});
export type Thread = z.infer<typeof threadSchema>;
export const streamTokenInputSchema = z.object({ thread: uuidSchema });
export const threadSubscribeInputSchema = z.object({
  thread: uuidSchema,
  token: z.string().min(1).max(4096),
  lastEventId: z.string().max(100).nullish(),
});

export const tenantSchema = z.object({
  id: uuidSchema,
  name: z.string(),
  subscriptionActive: z.boolean(),
  createdAt: z.iso.datetime(),
});
export type Tenant = z.infer<typeof tenantSchema>;
export const tenantCreateInputSchema = z.object({
  name: z.string().min(1).max(200),
  active: z.boolean().default(true),
});
export const tenantCreateOutputSchema = z.object({
  tenant: tenantSchema.pick({ id: true, name: true }),
  apiKey: z.string(),
});
export const subscriptionSetInputSchema = z.object({ tenantId: uuidSchema, active: z.boolean() });
export const apiKeySummarySchema = z.object({
  id: uuidSchema,
  prefix: z.string(),
  createdAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().nullable(),
  lastUsedAt: z.iso.datetime().nullable(),
});
export type ApiKeySummary = z.infer<typeof apiKeySummarySchema>;

export const environmentSchema = z.object({
  name: environmentNameSchema,
  envVarKeys: z.array(z.string()),
  createdAt: z.iso.datetime(),
});
export type Environment = z.infer<typeof environmentSchema>;
export const envVarsSetInputSchema = z.object({
  environment: environmentNameSchema,
  values: refusingProtoKey(
    z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), z.string()),
    "must be UPPER_CASE (^[A-Z][A-Z0-9_]*$)",
  ),
});
export const envVarsUnsetInputSchema = z.object({
  environment: environmentNameSchema,
  keys: z.array(z.string()).min(1),
});

export const webhookSchema = z.object({
  id: uuidSchema,
  environment: environmentNameSchema,
  url: z.url(),
  events: z.array(webhookEventTypeSchema),
  enabled: z.boolean(),
  failureStreak: z.number().int(),
  createdAt: z.iso.datetime(),
});
export type Webhook = z.infer<typeof webhookSchema>;
export const webhookCreateInputSchema = z.object({
  environment: environmentNameSchema,
  url: z.url({ protocol: /^https?$/ }),
  events: z.array(webhookEventTypeSchema).min(1).default(["run.completed", "run.failed"]),
});
export const webhookDeliveryAttemptSchema = z.object({
  id: uuidSchema,
  deliveryId: uuidSchema,
  webhookId: uuidSchema,
  /** Null for a prompt event's delivery. */
  runId: uuidSchema.nullable(),
  eventType: webhookEventTypeSchema,
  attempt: z.number().int().positive(),
  attemptedAt: z.iso.datetime(),
  responseStatus: z.number().int().nullable(),
  latencyMs: z.number().nullable(),
  error: z.string().nullable(),
});
export type WebhookDeliveryAttempt = z.infer<typeof webhookDeliveryAttemptSchema>;
