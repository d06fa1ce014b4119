import { z } from "zod";
import { slugSchema, tagSchema } from "./ids.ts";

const versionNumberSchema = z.number().int().positive();

/**
 * PUT /api/v1/prompts/{slug}/tags/{tag}. `expectedVersion` guards the move: a number means the
 * tag must point there now, null means the tag must not exist yet (docs/PRODUCT-RULES.md
 * "Prompts over REST").
 */
export const setTagRequestSchema = z.strictObject({
  version: versionNumberSchema,
  expectedVersion: versionNumberSchema.nullable().optional(),
});
export type SetTagRequest = z.infer<typeof setTagRequestSchema>;

/** The result of a tag move: where it points now and where it pointed before (null: it was new). */
export const tagMoveSchema = z.object({
  slug: slugSchema,
  tag: tagSchema,
  version: versionNumberSchema,
  previousVersion: versionNumberSchema.nullable(),
});
export type TagMove = z.infer<typeof tagMoveSchema>;

/** One move of a tag, newest first in the history; `version` null records a delete. */
export const tagHistoryEntrySchema = z.object({
  version: versionNumberSchema.nullable(),
  previousVersion: versionNumberSchema.nullable(),
  movedAt: z.iso.datetime(),
  movedBy: z.string().meta({ description: "The API key's prefix (REST, tRPC) or `cli`." }),
});
export type TagHistoryEntry = z.infer<typeof tagHistoryEntrySchema>;

/** `GET …/tags/{tag}/history` query. */
export const tagHistoryQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
