import {
  createRunResponseSchema,
  submitToolOutputsRequestSchema,
  TOOL_OUTPUT_MAX_BYTES,
  TOOL_RESULT_KEPT_BYTES,
  uuidSchema,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import {
  acceptedRunHeaders,
  errorResponse,
  errors,
  idempotencyKeyHeader,
  jsonBody,
  wwwAuthenticateHeader,
} from "./error-responses.ts";

const kib = (bytes: number) => `${bytes / 1024} KB`;

const description = [
  "Answers a run whose `phase` is `requires_action`: one output per call of its",
  "`requiredAction.toolCalls`, each a string or any JSON value of at most",
  `${kib(TOOL_OUTPUT_MAX_BYTES)} (UTF-8; its JSON when not a string). The outputs join the paused`,
  "step's `toolResults` (`executedBy: client`, in the order of the calls, each kept up to",
  `${kib(TOOL_RESULT_KEPT_BYTES)} with \`…[truncated]\`) and the run continues; follow it on the`,
  "thread's stream or with get_prompt_run. Needs an API key and an active subscription: a stream",
  "token is refused. `Idempotency-Key` works as on create_prompt_run (same key and body: the first",
  "answer again, even once the run has moved on; another body: 409).",
].join(" ");

/** POST /api/v1/promptruns/{id}/tool-outputs (docs/PRODUCT-RULES.md "Tool outputs"). */
export const toolOutputOperations: ZodOpenApiPathsObject = {
  "/api/v1/promptruns/{id}/tool-outputs": {
    post: {
      operationId: "submit_tool_outputs",
      tags: ["Runs"],
      summary: "Submit the outputs of a paused run's tool calls",
      description,
      requestParams: {
        path: z.object({ id: uuidSchema.meta({ description: "Prompt run id (a UUID)." }) }),
        header: z.object({
          "Idempotency-Key": idempotencyKeyHeader(
            "Replays of the same key and body return the first response (24 h).",
          ),
        }),
      },
      requestBody: { required: true, content: jsonBody(submitToolOutputsRequestSchema) },
      responses: {
        202: {
          description: "The pause has ended and the run continues.",
          content: jsonBody(createRunResponseSchema),
          headers: z.object(acceptedRunHeaders),
        },
        400: errors[400](
          "Invalid JSON or schema violation; a `toolCallId` the run does not wait for or given twice; a call of `requiredAction.toolCalls` left without an output (named); an output over 256 KB; a malformed Idempotency-Key. The message names the field.",
        ),
        401: errorResponse(
          "Missing or invalid API key. A stream token is not one: a browser holding the thread's token cannot answer the run's tools.",
          { "WWW-Authenticate": wwwAuthenticateHeader },
        ),
        403: errors[403],
        404: errorResponse("Unknown or malformed id, or a run of another tenant."),
        405: errors[405]("POST"),
        409: errorResponse(
          "The run is not waiting for tool outputs (the message names its status and phase, e.g. `run is pending (phase running), not waiting for tool outputs`), its pause expired (`tool outputs were not submitted before <expiresAt>`), another submission answered it first, or the Idempotency-Key was used with another request.",
        ),
        413: errors[413],
        415: errors[415],
        500: errors[500],
      },
    },
  },
};
