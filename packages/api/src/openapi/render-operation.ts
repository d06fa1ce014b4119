import { renderedPromptSchema, renderRequestSchema, slugSchema } from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors, jsonBody, rateLimitHeaders } from "./error-responses.ts";

/** A rendered request as documented: greet with a thread that has one earlier exchange. */
const renderedExample = {
  model: "openai:gpt-4o-mini",
  params: { temperature: 0.2 },
  messages: [
    { role: "system", content: "Greet people in a friendly tone. Sign as [env:BRAND]." },
    { role: "user", content: "Hello Ada, welcome to Promptrun!" },
    { role: "assistant", content: "Hi Ada!" },
    { role: "user", content: "Hello Grace, welcome to Promptrun!" },
  ],
  tools: [],
  output: null,
  providerOptions: null,
  memory: { messages: 2, dropped: 0 },
};

/** POST /api/v1/prompts/{slug}/{version}/render (docs/PRODUCT-RULES.md "Render"). */
export const renderOperation: ZodOpenApiPathsObject = {
  "/api/v1/prompts/{slug}/{version}/render": {
    post: {
      operationId: "render_prompt",
      tags: ["Prompts"],
      summary: "Render a prompt version without running it",
      description:
        "The exact request a run of this version would send (the engine's own rendering: system messages, the thread's memory window, then the rendered messages), without calling a model. `tools` are the version's tools as offered to the model (an MCP server by its URL without query or credentials, its tools not listed: render makes no network call). Every `{{env.NAME}}` shows as `[env:NAME]`, never its value; a name set neither on the environment nor in `envVars` is a 400, the error the run would fail with. Checks and errors are create-run's, in its order; a read, so no active subscription is needed. Takes from a rate-limit bucket of its own (sized as create-run's).",
      requestParams: {
        path: z.object({
          slug: slugSchema.meta({ description: "Prompt handle." }),
          version: z.string().meta({
            description:
              "A UUID (version id), a version number (`^[1-9][0-9]*$`), `latest`, or otherwise a tag (case-sensitive).",
          }),
        }),
      },
      requestBody: { required: true, content: jsonBody(renderRequestSchema) },
      responses: {
        200: {
          description: "The request a run would send.",
          content: {
            "application/json": {
              schema: renderedPromptSchema,
              examples: { greet: { summary: "A thread with one earlier exchange", value: renderedExample } },
            },
          },
          headers: z.object(rateLimitHeaders),
        },
        400: errors[400](
          "As on create-run: invalid JSON, too deep nesting, schema violation (unknown fields, `priority` and `metadata` included), missing, unknown or mistyped input (an image or file input that is not an https or base64 data: URL, or whose host is a private address), envVars rules, unknown environment; also an `{{env.NAME}}` set nowhere. The message names the field.",
        ),
        401: errors[401],
        404: errorResponse("Unknown or malformed slug, version, tag or id; a prompt of another tenant."),
        405: errors[405]("POST"),
        413: errors[413],
        415: errors[415],
        429: errors[429],
        500: errors[500],
      },
    },
  },
};
