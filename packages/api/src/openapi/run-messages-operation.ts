import { runMessagesSchema, uuidSchema } from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors } from "./error-responses.ts";

/** The second run of a thread on greet: the first exchange is its history. */
const runMessagesExample = {
  messages: [
    { role: "system", content: "Greet people in a friendly tone. Sign as [env:BRAND]." },
    { role: "user", content: "Hello Ada, welcome to Promptrun!" },
    { role: "assistant", content: "Hi Ada!" },
    { role: "user", content: "Hello Grace, welcome to Promptrun!" },
  ],
  memory: { messages: 2, dropped: 0 },
};

const description = [
  "The messages of the run's first model call, in send order: the prompt version's system messages,",
  "the thread history the run carried (`memory.messages` messages of its channel, those before its",
  "own exchange), then its user/assistant messages rendered from the run's stored `inputs`. Rendered",
  "by the engine's own code, as render_prompt does: every `{{env.NAME}}` shows as `[env:NAME]`, never",
  "its value. A run's memory is recorded when it ends: a pending run shows the history it would carry",
  "now, with `memory: null`; a run that ended without recording it shows none. The later model calls of a",
  "tool run (tool calls and results) are in the run's `steps`. Allowed without an active subscription.",
].join(" ");

/** GET /api/v1/promptruns/{id}/messages (docs/PRODUCT-RULES.md "Run messages"). */
export const runMessagesOperation: ZodOpenApiPathsObject = {
  "/api/v1/promptruns/{id}/messages": {
    get: {
      operationId: "get_prompt_run_messages",
      tags: ["Runs"],
      summary: "Get the messages a prompt run sent to its model",
      description,
      requestParams: {
        path: z.object({ id: uuidSchema.meta({ description: "Prompt run id (a UUID)." }) }),
      },
      responses: {
        200: {
          description: "The run's messages and the history it carried.",
          content: {
            "application/json": {
              schema: runMessagesSchema,
              examples: {
                greet: { summary: "A run carrying one earlier exchange", value: runMessagesExample },
              },
            },
          },
        },
        401: errors[401],
        404: errorResponse("Unknown or malformed id, or a run of another tenant."),
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
};
