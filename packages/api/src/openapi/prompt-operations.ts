import { pageOf, promptSummarySchema, pushedPromptSchema, slugSchema, tagSchema } from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors, jsonBody } from "./error-responses.ts";
import { promptFileComponent, promptVersionComponent } from "./prompt-components.ts";

/** The tag of the prompt operations (docs/PRODUCT-RULES.md "Prompts over REST"). */
export const promptsTag = {
  name: "Prompts",
  description:
    "Read the tenant's prompts and their versions, push a prompt file, and render a version without running it.",
};

const promptSummaryComponent = promptSummarySchema.meta({
  id: "PromptSummary",
  description:
    "A prompt: its newest version number, the latest version's description and every tag with the version it points at.",
});

const pushedPromptComponent = pushedPromptSchema.meta({
  id: "PushedPrompt",
  description: "The version a push landed on; `created` is false when it already existed with this content.",
});

const slugParam = slugSchema.meta({ description: "Prompt handle." });
const limitParam = z
  .number()
  .int()
  .min(1)
  .max(200)
  .default(50)
  .meta({ description: "Items per page, 1–200 (default 50); anything else is a 400." });
const cursorParam = z
  .string()
  .max(200)
  .optional()
  .meta({ description: "The `nextCursor` of the previous page; an invalid cursor is a 400." });

const etagHeader = z.string().meta({ description: '`"<contentHash>"` of the version.' });
const cacheControlHeader = z
  .literal("private, no-cache")
  .meta({ description: "Revalidate with If-None-Match: a tag or `latest` may move." });

const badQuery = errors[400](
  "An unknown or repeated query parameter, a limit outside 1–200, an invalid cursor; the message names the parameter.",
);
const unknownPrompt = errorResponse("Unknown or malformed slug, or a prompt of another tenant.");

const listPrompts = {
  operationId: "list_prompts",
  tags: [promptsTag.name],
  summary: "List prompts",
  description:
    "The tenant's prompts in slug order. Allowed without an active subscription. `q` keeps prompts whose slug or latest description contains it (case-insensitive; `%` and `_` are literal), `tag` those having that tag.",
  requestParams: {
    query: z.object({
      q: z.string().min(1).max(200).optional().meta({ description: "Substring of the slug or description." }),
      tag: tagSchema.optional().meta({ description: "Only prompts having this tag." }),
      cursor: cursorParam,
      limit: limitParam,
    }),
  },
  responses: {
    200: { description: "A page of prompt summaries.", content: jsonBody(pageOf(promptSummaryComponent)) },
    400: badQuery,
    401: errors[401],
    405: errors[405]("GET, HEAD, POST"),
    500: errors[500],
  },
};

const pushPrompt = {
  operationId: "push_prompt",
  tags: [promptsTag.name],
  summary: "Push a prompt file",
  description:
    "The body is one prompt file as JSON (the schema of the YAML files). A push whose content equals the newest version's creates nothing (`200`, `created: false`); tags in the file point at the resulting version. Naturally idempotent: no Idempotency-Key.",
  requestBody: { required: true, content: jsonBody(promptFileComponent) },
  responses: {
    200: {
      description: "The newest version already has this content (`created: false`).",
      content: jsonBody(pushedPromptComponent),
    },
    201: {
      description: "A new version (`created: true`).",
      content: jsonBody(pushedPromptComponent),
      headers: z.object({ Location: z.string().meta({ description: "/api/v1/prompts/{slug}/{version}" }) }),
    },
    400: errors[400](
      "Invalid JSON, too deep nesting, or a prompt file the push checks refuse (schema, templates, input defaults, output schema, unknown model provider). The message names the field by its path.",
    ),
    401: errors[401],
    403: errors[403],
    405: errors[405]("GET, HEAD, POST"),
    409: errorResponse("The tenant's prompt-version quota is reached."),
    413: errors[413],
    415: errors[415],
    500: errors[500],
  },
};

const getPrompt = {
  operationId: "get_prompt",
  tags: [promptsTag.name],
  summary: "Get a prompt",
  description: "One prompt's summary. Allowed without an active subscription.",
  requestParams: { path: z.object({ slug: slugParam }) },
  responses: {
    200: { description: "The prompt summary.", content: jsonBody(promptSummaryComponent) },
    401: errors[401],
    404: unknownPrompt,
    405: errors[405]("GET, HEAD"),
    500: errors[500],
  },
};

const listVersions = {
  operationId: "list_prompt_versions",
  tags: [promptsTag.name],
  summary: "List a prompt's versions",
  description:
    "Whole versions, newest first. Allowed without an active subscription. (A tag named `versions` is read by number or id instead.)",
  requestParams: {
    path: z.object({ slug: slugParam }),
    query: z.object({ cursor: cursorParam, limit: limitParam }),
  },
  responses: {
    200: { description: "A page of versions.", content: jsonBody(pageOf(promptVersionComponent)) },
    400: badQuery,
    401: errors[401],
    404: unknownPrompt,
    405: errors[405]("GET, HEAD"),
    500: errors[500],
  },
};

const getVersion = {
  operationId: "get_prompt_version",
  tags: [promptsTag.name],
  summary: "Get a prompt version",
  description:
    "The whole version. `ETag` is the quoted contentHash; `If-None-Match` with it (or a list holding it, or `*`) answers `304` without a body. Allowed without an active subscription.",
  requestParams: {
    path: z.object({
      slug: slugParam,
      version: z.string().meta({
        description:
          "A UUID (version id), a version number (`^[1-9][0-9]*$`), `latest`, or otherwise a tag (case-sensitive).",
      }),
    }),
    header: z.object({
      "If-None-Match": z
        .string()
        .optional()
        .meta({ description: "An ETag from an earlier answer, a list, or `*`." }),
    }),
  },
  responses: {
    200: {
      description: "The version.",
      content: jsonBody(promptVersionComponent),
      headers: z.object({ ETag: etagHeader, "Cache-Control": cacheControlHeader }),
    },
    304: {
      description: "The version still has the content of the ETag sent in If-None-Match; no body.",
      headers: z.object({ ETag: etagHeader, "Cache-Control": cacheControlHeader }),
    },
    401: errors[401],
    404: errorResponse("Unknown or malformed slug, version, tag or id, or a prompt of another tenant."),
    405: errors[405]("GET, HEAD"),
    500: errors[500],
  },
};

/** The prompt routes of docs/PRODUCT-RULES.md "Prompts over REST". */
export const promptOperations: ZodOpenApiPathsObject = {
  "/api/v1/prompts": { get: listPrompts, post: pushPrompt },
  "/api/v1/prompts/{slug}": { get: getPrompt },
  "/api/v1/prompts/{slug}/versions": { get: listVersions },
  "/api/v1/prompts/{slug}/{version}": { get: getVersion },
};
