import { z } from "zod";
import { environmentNameSchema, slugSchema } from "./ids.ts";
import { tokenUsageSchema } from "./run.ts";

export const usageGroupBySchema = z.enum(["day", "prompt", "model", "environment"]);
export type UsageGroupBy = z.infer<typeof usageGroupBySchema>;

/** The longest range one usage report covers. */
export const USAGE_MAX_RANGE_DAYS = 366;

/** `2026-05-01` (a UTC day) or an ISO 8601 date-time with a zone. */
const dateOrDateTimeSchema = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** GET /api/v1/usage and tRPC usage.get (docs/PRODUCT-RULES.md "Usage"). */
export const usageRequestSchema = z
  .object({
    from: dateOrDateTimeSchema.optional(),
    to: dateOrDateTimeSchema.optional(),
    groupBy: usageGroupBySchema.default("day"),
    environment: environmentNameSchema.optional(),
    prompt: slugSchema.optional(),
  })
  .strict();
export type UsageRequest = z.input<typeof usageRequestSchema>;

export const usageItemSchema = z
  .object({
    key: z
      .string()
      .meta({ description: "`YYYY-MM-DD` (UTC), the prompt slug, `provider:model`, or the environment." }),
    runs: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    tokenUsage: tokenUsageSchema,
    cost: z
      .object({ success: z.number(), retries: z.number(), total: z.number() })
      .meta({ description: "US dollars." }),
    unpricedRuns: z
      .number()
      .int()
      .meta({ description: "Runs whose model has no known price (their cost counts as 0)." }),
  })
  .meta({ id: "UsageItem" });
export type UsageItem = z.infer<typeof usageItemSchema>;

export const usageResponseSchema = z.object({ items: z.array(usageItemSchema) }).meta({ id: "Usage" });
export type UsageResponse = z.infer<typeof usageResponseSchema>;
