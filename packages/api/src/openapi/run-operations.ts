import {
  pageOf,
  promptRunSchema,
  runListFiltersSchema,
  runListPhaseSchema,
  usageRequestSchema,
  usageResponseSchema,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors, jsonBody } from "./error-responses.ts";

const runPageSchema = pageOf(promptRunSchema).meta({
  id: "PromptRunPage",
  description: "Newest first; `nextCursor` is null on the last page.",
});

const pageParams = {
  cursor: z.string().max(200).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(200).optional().meta({ description: "1–200, default 50." }),
};

const filters = runListFiltersSchema.shape;
const listRunsQuery = z.object({
  thread: filters.thread.meta({ description: "Runs of this thread." }),
  status: filters.status.meta({ description: "pending, completed or failed." }),
  phase: runListPhaseSchema.optional().meta({
    description:
      "Of pending runs: `queued` (not started), `running`, or `requires_action` (paused for tool outputs).",
  }),
  prompt: filters.prompt.meta({ description: "Runs of this prompt (slug)." }),
  version: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: "Of `prompt`: this version number." }),
  environment: filters.environment.meta({ description: "Runs in this environment." }),
  channel: filters.channel.meta({ description: "Runs of this channel." }),
  createdAfter: filters.createdAfter.meta({ description: "Created at or after this ISO 8601 date-time." }),
  createdBefore: filters.createdBefore.meta({ description: "Created before this ISO 8601 date-time." }),
  ...pageParams,
});

const usageQuery = z.object({
  from: usageRequestSchema.shape.from.meta({
    description:
      "Start (inclusive): `YYYY-MM-DD` (UTC) or an ISO 8601 date-time. Default: 30 UTC days before `to`.",
  }),
  to: usageRequestSchema.shape.to.meta({
    description: "End (exclusive). Default: the start of tomorrow (UTC), or 30 days after `from`.",
  }),
  groupBy: usageRequestSchema.shape.groupBy.meta({
    description: "day (default), prompt, model or environment.",
  }),
  environment: usageRequestSchema.shape.environment.meta({ description: "Only runs in this environment." }),
  prompt: usageRequestSchema.shape.prompt.meta({ description: "Only runs of this prompt (slug)." }),
});

const listRunsDescription = [
  "Newest first (by creation time, then id); every filter is optional and they combine with AND.",
  "`metadata.<key>=<value>` (repeatable with different keys) keeps runs whose metadata `key` is that",
  "string or an array containing it. A query parameter not listed here (nor `metadata.<key>`) is a",
  "`400` naming it. Pages stay stable while runs are being created: a new run is never on a later",
  "page. Allowed without an active subscription.",
].join(" ");

/** GET /api/v1/promptruns and GET /api/v1/usage (docs/PRODUCT-RULES.md "Listing runs", "Usage"). */
export const runListOperations: ZodOpenApiPathsObject = {
  "/api/v1/promptruns": {
    get: {
      operationId: "list_prompt_runs",
      tags: ["Runs"],
      summary: "List prompt runs",
      description: listRunsDescription,
      requestParams: { query: listRunsQuery },
      responses: {
        200: { description: "One page of prompt runs.", content: jsonBody(runPageSchema) },
        400: errors[400](
          "An unknown query parameter, a malformed filter (thread not a UUID, unknown status or phase, version without prompt, a date-time without zone), an invalid cursor or a limit outside 1–200. The message names the parameter.",
        ),
        401: errors[401],
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
  "/api/v1/usage": {
    get: {
      operationId: "get_usage",
      tags: ["Usage"],
      summary: "Usage and cost of ended runs",
      description:
        "Runs that ended (completed or failed) and were created in `[from, to)`, grouped by `groupBy`, ordered by key. Costs are US dollars; a run whose model has no known price counts in `unpricedRuns`. Allowed without an active subscription.",
      requestParams: { query: usageQuery },
      responses: {
        200: { description: "One item per group that has runs.", content: jsonBody(usageResponseSchema) },
        400: errorResponse(
          "An unknown query parameter, a malformed date, an unknown groupBy, `to` not after `from`, or a range over 366 days.",
        ),
        401: errors[401],
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
};

/** The tag of the usage operation. */
export const usageTag = {
  name: "Usage",
  description: "Token usage and cost, grouped by day, prompt, model or environment.",
};
