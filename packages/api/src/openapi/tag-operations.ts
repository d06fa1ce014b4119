import {
  pageOf,
  setTagRequestSchema,
  slugSchema,
  tagHistoryEntrySchema,
  tagMoveSchema,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors, jsonBody } from "./error-responses.ts";
import { promptsTag } from "./prompt-operations.ts";

const setTagRequestComponent = setTagRequestSchema.meta({
  id: "SetTagRequest",
  description:
    "`version`: the version number the tag should point at. `expectedVersion` (optional) guards the move: a number means the tag must point there now, null means the tag must not exist yet.",
});

const tagMoveComponent = tagMoveSchema.meta({
  id: "TagMove",
  description:
    "Where the tag points now, and where it pointed before (`previousVersion` null: the tag is new).",
});

const tagPath = z.object({
  slug: slugSchema.meta({ description: "Prompt handle." }),
  tag: z.string().meta({ description: "Tag name; `latest` and version numbers are not tags (400)." }),
});

const setTag = {
  operationId: "set_prompt_tag",
  tags: [promptsTag.name],
  summary: "Move a tag",
  description:
    "Points the tag at a version, optionally guarded by `expectedVersion` (compare-and-set: of concurrent moves with the same guard exactly one wins).",
  requestParams: { path: tagPath },
  requestBody: { required: true, content: jsonBody(setTagRequestComponent) },
  responses: {
    200: { description: "The tag moved (or was created).", content: jsonBody(tagMoveComponent) },
    400: errors[400](
      "Invalid JSON, a body field (named by its path), or a tag that is `latest` or a version number.",
    ),
    401: errors[401],
    403: errors[403],
    404: errorResponse("Unknown or malformed slug, unknown version, or a prompt of another tenant."),
    405: errors[405]("PUT, DELETE"),
    409: errorResponse("`expectedVersion` did not match; the message says where the tag points now."),
    413: errors[413],
    415: errors[415],
    500: errors[500],
  },
};

const deleteTag = {
  operationId: "delete_prompt_tag",
  tags: [promptsTag.name],
  summary: "Delete a tag",
  description: "Removes the tag; runs by this tag are 404 afterwards.",
  requestParams: { path: tagPath },
  responses: {
    204: { description: "The tag is gone." },
    400: errors[400]("A tag that is `latest` or a version number."),
    401: errors[401],
    403: errors[403],
    404: errorResponse("Unknown or malformed slug, unknown tag, or a prompt of another tenant."),
    405: errors[405]("PUT, DELETE"),
    500: errors[500],
  },
};

const tagHistoryEntryComponent = tagHistoryEntrySchema.meta({
  id: "TagHistoryEntry",
  description:
    "One move of a tag: `version` null records a delete, `previousVersion` null a new tag; `movedBy` is the API key's prefix (REST, tRPC) or `cli`.",
});

const tagHistory = {
  operationId: "list_prompt_tag_history",
  tags: [promptsTag.name],
  summary: "List a tag's moves",
  description:
    "Every move of the tag (REST, tRPC, CLI, pushes), newest first. Allowed without an active subscription. A tag that never moved gives an empty page.",
  requestParams: {
    path: tagPath,
    query: z.object({
      cursor: z
        .string()
        .max(200)
        .optional()
        .meta({ description: "The `nextCursor` of the previous page; an invalid cursor is a 400." }),
      limit: z
        .number()
        .int()
        .min(1)
        .max(200)
        .default(50)
        .meta({ description: "Items per page, 1–200 (default 50)." }),
    }),
  },
  responses: {
    200: {
      description: "A page of moves, newest first.",
      content: jsonBody(pageOf(tagHistoryEntryComponent)),
    },
    400: errors[400](
      "An unknown query parameter, a limit outside 1–200, an invalid cursor, or a tag that is `latest` or a version number.",
    ),
    401: errors[401],
    404: errorResponse("Unknown or malformed slug, or a prompt of another tenant."),
    405: errors[405]("GET, HEAD"),
    500: errors[500],
  },
};

/** The tag routes of docs/PRODUCT-RULES.md "Prompts over REST". */
export const tagOperations: ZodOpenApiPathsObject = {
  "/api/v1/prompts/{slug}/tags/{tag}": { put: setTag, delete: deleteTag },
  "/api/v1/prompts/{slug}/tags/{tag}/history": { get: tagHistory },
};
