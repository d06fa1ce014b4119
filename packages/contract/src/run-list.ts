import { z } from "zod";
import { channelSchema, environmentNameSchema, slugSchema, uuidSchema } from "./ids.ts";
import { pageRequestSchema } from "./pagination.ts";
import { METADATA_MAX_KEY_LENGTH, METADATA_MAX_VALUE_LENGTH, runStatusSchema } from "./run.ts";

/** `queued`, `running`, or `requires_action` (accepted; no run is in it until tools exist). */
export const runListPhaseSchema = z.enum(["queued", "running", "requires_action"]);

/** An ISO 8601 date-time with a zone (`Z` or an offset). */
const isoDateTimeSchema = z.iso.datetime({ offset: true });

/**
 * The filters of GET /api/v1/promptruns and tRPC run.list; every one optional, combined with AND
 * (docs/PRODUCT-RULES.md "Listing runs").
 */
export const runListFiltersSchema = z.object({
  thread: uuidSchema.optional(),
  status: runStatusSchema.optional(),
  phase: runListPhaseSchema.optional(),
  prompt: slugSchema.optional(),
  version: z.number().int().min(1).optional(),
  environment: environmentNameSchema.optional(),
  channel: channelSchema.optional(),
  /** `metadata.<key>=<value>`: the key's value is the string or an array containing it. */
  metadata: z
    .record(z.string().min(1).max(METADATA_MAX_KEY_LENGTH), z.string().max(METADATA_MAX_VALUE_LENGTH))
    .optional(),
  createdAfter: isoDateTimeSchema.optional(),
  createdBefore: isoDateTimeSchema.optional(),
});
export type RunListFilters = z.infer<typeof runListFiltersSchema>;

/** A `version` filter names a version of one prompt: it needs `prompt`. */
const versionNeedsPrompt = (filters: RunListFilters, context: z.RefinementCtx): void => {
  if (filters.version !== undefined && filters.prompt === undefined) {
    context.addIssue({ code: "custom", path: ["version"], message: "version needs prompt" });
  }
};

/** The whole request of a run list: the filters and the page. */
export const runListRequestSchema = pageRequestSchema
  .extend(runListFiltersSchema.shape)
  .strict()
  .superRefine(versionNeedsPrompt);
export type RunListRequest = z.input<typeof runListRequestSchema>;

/** The query parameters GET /api/v1/promptruns knows, besides `metadata.<key>`. */
export const RUN_LIST_QUERY_NAMES = [
  "thread",
  "status",
  "phase",
  "prompt",
  "version",
  "environment",
  "channel",
  "createdAfter",
  "createdBefore",
  "cursor",
  "limit",
] as const;

/** Prefix of the metadata filters: `metadata.customer=acme`. */
export const METADATA_QUERY_PREFIX = "metadata.";
