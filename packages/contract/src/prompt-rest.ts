import { z } from "zod";
import { slugSchema, tagSchema } from "./ids.ts";
import { pageRequestSchema } from "./pagination.ts";
import { pushResultSchema } from "./prompt.ts";

/** `q`: case-insensitive substring of a prompt's slug or latest description; `tag`: prompts having that tag. */
export const promptListFilterSchema = z.object({
  q: z.string().min(1).max(200).optional(),
  tag: tagSchema.optional(),
});
export type PromptListFilter = z.infer<typeof promptListFilterSchema>;

/** Input of tRPC `prompt.list`: a page and the filters of `GET /api/v1/prompts`. */
export const promptListInputSchema = pageRequestSchema.extend(promptListFilterSchema.shape);
export type PromptListInput = z.input<typeof promptListInputSchema>;

/** Query of `GET /api/v1/prompts` (strings from the URL; unknown names are refused). */
export const promptListQuerySchema = z.strictObject({
  ...promptListFilterSchema.shape,
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** Query of `GET /api/v1/prompts/{slug}/versions`. */
export const promptVersionsQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** Answer of `POST /api/v1/prompts`: 201 with `created: true`, 200 with `created: false`. */
export const pushedPromptSchema = pushResultSchema;
export type PushedPrompt = z.infer<typeof pushedPromptSchema>;

/** Input of tRPC `prompt.summary` (REST: `GET /api/v1/prompts/{slug}`). */
export const promptSummaryInputSchema = z.object({ slug: slugSchema });
