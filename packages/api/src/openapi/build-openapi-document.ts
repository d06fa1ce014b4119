import {
  createRunRequestSchema,
  createRunResponseSchema,
  endEventSchema,
  promptRunSchema,
  readyEventSchema,
  resetEventSchema,
  runCompletedEventSchema,
  runFailedEventSchema,
  runRequiresActionEventSchema,
  runRetrievalEventSchema,
  runStartedEventSchema,
  runStepEventSchema,
  runTokenEventSchema,
  runToolCallEventSchema,
  runToolResultEventSchema,
  slugSchema,
  streamTokenResponseSchema,
  uuidSchema,
  workflowCompletedEventSchema,
  workflowFailedEventSchema,
  workflowStartedEventSchema,
  workflowStepEventSchema,
} from "@promptrun/contract";
import { z } from "zod";
import { type CreateDocumentOptions, createDocument } from "zod-openapi";
import {
  acceptedRunHeaders,
  errorResponse,
  errors,
  idempotencyKeyHeader,
  jsonBody,
  rateLimitHeaders,
  storeUnavailableResponse,
  streamTooManyResponse,
  wwwAuthenticateHeader,
} from "./error-responses.ts";
import { knowledgeBasesTag, knowledgeOperations } from "./knowledge-base-operations.ts";
import {
  completedJsonRunExample,
  promptFileComponent,
  promptVersionComponent,
  requiresActionRunExample,
} from "./prompt-components.ts";
import { promptOperations, promptsTag } from "./prompt-operations.ts";
import { renderOperation } from "./render-operation.ts";
import { runMessagesOperation } from "./run-messages-operation.ts";
import { runListOperations, usageTag } from "./run-operations.ts";
import { tagOperations } from "./tag-operations.ts";
import { threadOperations, threadsTag } from "./thread-operations.ts";
import { toolOutputOperations } from "./tool-output-operations.ts";
import { webhookOperations, webhookPayloadComponents } from "./webhook-operations.ts";
import { workflowOperations, workflowsTag } from "./workflow-operations.ts";

export type OpenApiDocument = ReturnType<typeof createDocument>;

const streamEvents: Array<{ name: string; component: string; schema: z.ZodType; description: string }> = [
  {
    name: "ready",
    component: "ReadyEvent",
    schema: readyEventSchema,
    description:
      "The subscription is live. Its id is the resume position: a reconnect with it receives everything published since.",
  },
  {
    name: "run.started",
    component: "RunStartedEvent",
    schema: runStartedEventSchema,
    description: "A run of the thread started executing (again, with a higher attempt, on a retry).",
  },
  {
    name: "run.retrieval",
    component: "RunRetrievalEvent",
    schema: runRetrievalEventSchema,
    description:
      "The run searched a knowledge base (its prompt's `retrieval`, before the model's first token, or a `knowledge_base` tool call): the query and the numbered chunks found.",
  },
  {
    name: "run.token",
    component: "RunTokenEvent",
    schema: runTokenEventSchema,
    description: "A piece of output text; index counts from 0 within a run and goes on across its steps.",
  },
  {
    name: "run.step",
    component: "RunStepEvent",
    schema: runStepEventSchema,
    description: "A model call of the run starts; `step` counts from 0 (a run that calls tools has several).",
  },
  {
    name: "run.tool_call",
    component: "RunToolCallEvent",
    schema: runToolCallEventSchema,
    description: "The model asked for a tool, with its arguments (sent once its step is stored).",
  },
  {
    name: "run.tool_result",
    component: "RunToolResultEvent",
    schema: runToolResultEventSchema,
    description:
      "A server tool call has its result, or a call was refused at once (unknown tool, bad arguments); the output itself is in the run's `steps`, as are the outputs a caller submits (they send no event).",
  },
  {
    name: "run.requires_action",
    component: "RunRequiresActionEvent",
    schema: runRequiresActionEventSchema,
    description:
      "The run paused for the caller's tool outputs (`requiredAction`); answer with submit_tool_outputs before `expiresAt`.",
  },
  {
    name: "run.completed",
    component: "RunCompletedEvent",
    schema: runCompletedEventSchema,
    description:
      "The run finished with output, token usage and cost; also outputJson (the parsed output of a prompt with an output schema, else null), finishReason and memory.",
  },
  {
    name: "run.failed",
    component: "RunFailedEvent",
    schema: runFailedEventSchema,
    description: "The run failed (or was cancelled) with an error message and the cost of what was consumed.",
  },
  {
    name: "workflow.started",
    component: "WorkflowStartedEvent",
    schema: workflowStartedEventSchema,
    description: "A workflow run on the thread was created (once); its steps' runs follow as `run.*` events.",
  },
  {
    name: "workflow.step",
    component: "WorkflowStepEvent",
    schema: workflowStepEventSchema,
    description:
      "A step of a workflow run changed status (running, completed, failed, skipped, cancelled); `runId` is the step's prompt run, null for a retrieve step or a step that never started.",
  },
  {
    name: "workflow.completed",
    component: "WorkflowCompletedEvent",
    schema: workflowCompletedEventSchema,
    description:
      "The workflow run finished (once) with its output, outputJson (the value of an output that is one step's `output` or one non-string expression, else null), summed token usage and cost.",
  },
  {
    name: "workflow.failed",
    component: "WorkflowFailedEvent",
    schema: workflowFailedEventSchema,
    description:
      "The workflow run failed (once): a step failed (`step '<id>' failed: …`) or it was cancelled (`cancelled`), with the cost of what was consumed.",
  },
  {
    name: "reset",
    component: "ResetEvent",
    schema: resetEventSchema,
    description: "Last-Event-ID was older than the replay buffer: resynchronise, live events follow.",
  },
  {
    name: "end",
    component: "EndEvent",
    schema: endEventSchema,
    description: "The server closes the stream on purpose (shutdown, slow consumer, token expiry).",
  },
];

const streamDescription = [
  "Server-Sent Events of one thread. Every event has an `id:`, an `event:` name and JSON `data:`;",
  "a `: ping` comment arrives every 5 seconds. Reconnect with `Last-Event-ID` (header or",
  "`?lastEventId=`) to receive the events missed within the replay buffer (60 s by default).",
  "",
  "| event | data | meaning |",
  "|---|---|---|",
  ...streamEvents.map(
    (event) =>
      `| \`${event.name}\` | [${event.component}](#/components/schemas/${event.component}) | ${event.description} |`,
  ),
].join("\n");

/**
 * OpenAPI 3.1 cannot describe an event stream, so each SSE message is documented as an object
 * of its three fields; on the wire they are `id:`, `event:` and `data:` lines.
 */
const streamMessageSchema = z
  .union(
    streamEvents.map((event) =>
      z.object({
        id: z.string().meta({ description: "SSE id; send it back as Last-Event-ID to resume." }),
        event: z.literal(event.name).meta({ description: event.description }),
        data: event.schema.meta({ id: event.component }),
      }),
    ),
  )
  .meta({
    id: "StreamMessage",
    description: "One SSE message (`id:`, `event:` and JSON `data:` lines on the wire).",
  });

const threadParam = uuidSchema.meta({ description: "Thread id (a UUID); the thread need not exist yet." });
const runIdParam = uuidSchema.meta({ description: "Prompt run id (a UUID)." });
const promptRunJson = jsonBody(promptRunSchema);
const promptRunJsonWithExample = {
  "application/json": {
    schema: promptRunSchema,
    examples: {
      completedJson: {
        summary: "A completed run of a prompt with an output schema",
        value: completedJsonRunExample,
      },
      requiresAction: {
        summary: "A run paused for a client tool call (answer it with submit_tool_outputs)",
        value: requiresActionRunExample,
      },
    },
  },
};

/**
 * Responses may gain fields (docs/PRODUCT-RULES.md "Runs" allows extensions), so output objects stay open instead
 * of zod's default `additionalProperties: false`.
 */
const openOutputObjects: CreateDocumentOptions["override"] = ({ jsonSchema, io }) => {
  if (io === "output" && jsonSchema.additionalProperties === false) delete jsonSchema.additionalProperties;
  // `unknown().nullable()` (outputJson) becomes `anyOf: [{}, null]`; `{}` alone already admits null.
  if (jsonSchema.anyOf?.some((branch) => typeof branch === "object" && Object.keys(branch).length === 0))
    delete jsonSchema.anyOf;
};

/**
 * A described copy of a component (`costSchema.meta({description})`) renders as `$ref` plus its
 * own keys, and zod adds `additionalProperties: false` to it in responses without calling the
 * override above. Beside a `$ref` (and no `properties`) it would allow no property at all; the
 * referenced component already says whether it is open. So it goes.
 */
function dropClosedRefSiblings(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropClosedRefSiblings(item);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const object = node as Record<string, unknown>;
  if (typeof object.$ref === "string" && object.additionalProperties === false && !("properties" in object))
    delete object.additionalProperties;
  for (const value of Object.values(object)) dropClosedRefSiblings(value);
}

const tags = [
  promptsTag,
  {
    name: "Runs",
    description: "Create a run of a stored prompt version, read it, answer its client tool calls, cancel it.",
  },
  {
    name: "Streaming",
    description: "Live output of a thread: a short-lived stream token, then Server-Sent Events.",
  },
  {
    name: "Webhooks",
    description:
      "Signed POSTs (Standard Webhooks) the server sends to the webhooks of an environment when a run ends or waits for tool outputs, and, to webhooks that ask, when a prompt changes, a document is ingested or a workflow run ends.",
  },
  workflowsTag,
  threadsTag,
  knowledgeBasesTag,
  usageTag,
  { name: "Reference", description: "This document." },
];

/** The OpenAPI 3.1 document of the public REST surface, generated from the contract's zod schemas. */
// long-function: one declarative document; every route and its responses stay visible in one place.
export function buildOpenApiDocument(options: { serverUrl?: string } = {}): OpenApiDocument {
  const document = createDocument(
    {
      openapi: "3.1.0",
      info: {
        title: "Promptrun API",
        version: "1.0.0",
        // The repository states no license (no LICENSE file, no SPDX id in package.json).
        license: { name: "Proprietary" },
        description:
          "Executes stored, versioned prompts against language models. Every error body is " +
          '`{"error": "<message>"}` (with a machine-readable `code`). When several failures apply, the ' +
          "first of: malformed path id (404), missing or invalid key (401), inactive subscription " +
          "(403), content type (415), size (413), invalid JSON (400), unknown slug/version/tag/id " +
          "(404), body and input validation (400). A method a path does not accept answers 405 with " +
          "an `Allow` header.",
      },
      ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
      security: [{ apiKey: [] }],
      tags,
      webhooks: webhookOperations,
      components: {
        schemas: {
          PromptFile: promptFileComponent,
          PromptVersion: promptVersionComponent,
          ...webhookPayloadComponents,
        },
        securitySchemes: {
          apiKey: { type: "http", scheme: "bearer", description: "`Authorization: Bearer <API_KEY>`." },
          streamToken: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            description: "Short-lived stream token from the stream-token operation; one thread only.",
          },
          streamTokenQuery: {
            type: "apiKey",
            in: "query",
            name: "token",
            description:
              "The stream token as `?token=` for the browser's EventSource, which cannot send headers.",
          },
        },
      },
      paths: {
        ...promptOperations,
        ...tagOperations,
        ...runListOperations,
        ...threadOperations,
        ...knowledgeOperations,
        ...workflowOperations,
        "/api/v1/threads/{thread}/stream-token": {
          post: {
            operationId: "create_stream_token",
            tags: ["Streaming"],
            summary: "Create a streaming credential for a thread",
            requestParams: { path: z.object({ thread: threadParam }) },
            responses: {
              200: {
                description: "A token for the thread's stream, and the stream's URL.",
                content: jsonBody(streamTokenResponseSchema),
                headers: z.object(rateLimitHeaders),
              },
              401: errors[401],
              403: errors[403],
              404: errorResponse("The thread id is malformed."),
              405: errors[405]("POST"),
              429: errors[429],
              500: errors[500],
            },
          },
        },
        "/api/v1/prompts/{slug}/{version}/runs": {
          post: {
            operationId: "create_prompt_run",
            tags: ["Runs"],
            summary: "Create a prompt run",
            description:
              "Queues a run of a stored prompt version; read it with get_prompt_run or follow it on the thread's stream.",
            requestParams: {
              path: z.object({
                slug: slugSchema.meta({ description: "Prompt handle." }),
                version: z.string().meta({
                  description:
                    "A UUID (version id), a version number (`^[1-9][0-9]*$`), `latest`, or otherwise a tag (case-sensitive).",
                }),
              }),
              header: z.object({
                "Idempotency-Key": idempotencyKeyHeader(
                  "Replays of the same key return the first response (24 h).",
                ),
              }),
            },
            requestBody: { required: true, content: jsonBody(createRunRequestSchema) },
            responses: {
              202: {
                description: "The run is durably queued.",
                content: jsonBody(createRunResponseSchema),
                headers: z.object({ ...acceptedRunHeaders, ...rateLimitHeaders }),
              },
              400: errors[400](
                "Invalid JSON, too deep nesting, schema violation (unknown fields included), missing, unknown or mistyped input (an image or file input that is not an https or base64 data: URL, or whose host is a private address; a messages input that is not a list of at most 200 {role, content}), envVars or metadata rules, unknown environment. The message names the field.",
              ),
              401: errors[401],
              403: errors[403],
              404: errorResponse("Unknown or malformed slug, version, tag or id."),
              405: errors[405]("POST"),
              409: errorResponse(
                "`Idempotency-Key reused with a different request`: the key was used within 24 h with another body, prompt, version or environment.",
              ),
              413: errors[413],
              415: errors[415],
              429: errors[429],
              500: errors[500],
              503: storeUnavailableResponse,
            },
          },
        },
        ...renderOperation,
        ...toolOutputOperations,
        "/api/v1/promptruns/{id}": {
          get: {
            operationId: "get_prompt_run",
            tags: ["Runs"],
            summary: "Get a prompt run",
            description: "Allowed without an active subscription.",
            requestParams: { path: z.object({ id: runIdParam }) },
            responses: {
              200: { description: "The prompt run.", content: promptRunJsonWithExample },
              401: errors[401],
              404: errorResponse("Unknown or malformed id, or a run of another tenant."),
              405: errors[405]("GET, HEAD"),
              500: errors[500],
            },
          },
        },
        ...runMessagesOperation,
        "/api/v1/promptruns/{id}/cancel": {
          post: {
            operationId: "cancel_prompt_run",
            tags: ["Runs"],
            summary: "Cancel a prompt run (extension)",
            description:
              "Aborts the provider call; the run ends `failed` with error `cancelled` and keeps the cost of what was consumed.",
            requestParams: { path: z.object({ id: runIdParam }) },
            responses: {
              200: { description: "The cancelled prompt run.", content: promptRunJson },
              401: errors[401],
              404: errorResponse("Unknown or malformed id, or a run of another tenant."),
              405: errors[405]("POST"),
              409: errorResponse("The run has already ended."),
              500: errors[500],
            },
          },
        },
        "/api/v1/openapi.json": {
          get: {
            operationId: "get_openapi_document",
            tags: ["Reference"],
            summary: "This OpenAPI document",
            security: [],
            responses: {
              200: {
                description: "OpenAPI 3.1 document.",
                content: { "application/json": { schema: { type: "object" } } },
              },
              405: errors[405]("GET, HEAD"),
            },
          },
        },
        "/stream/{thread}": {
          get: {
            operationId: "subscribe_thread",
            tags: ["Streaming"],
            summary: "Subscribe to a thread's live output (SSE)",
            description: streamDescription,
            security: [{ streamToken: [] }, { streamTokenQuery: [] }],
            requestParams: {
              path: z.object({ thread: threadParam }),
              query: z.object({
                lastEventId: z.string().optional().meta({
                  description: "Resume after this event id (for EventSource, which cannot set headers).",
                }),
              }),
              header: z.object({
                "Last-Event-ID": z.string().optional().meta({ description: "Resume after this event id." }),
              }),
            },
            responses: {
              200: {
                description: "An SSE stream; the events are listed in the operation's description.",
                content: { "text/event-stream": { schema: streamMessageSchema } },
              },
              401: errorResponse("Missing, invalid or expired stream token.", {
                "WWW-Authenticate": wwwAuthenticateHeader,
              }),
              403: errorResponse("The token belongs to another thread."),
              404: errorResponse("The thread id is malformed."),
              405: errors[405]("GET, HEAD", " `OPTIONS` is a CORS preflight (`204`)."),
              429: streamTooManyResponse,
              500: errors[500],
            },
          },
        },
      },
    },
    // A nullable of `unknown` is left empty by openOutputObjects (`{}` admits null too).
    { override: openOutputObjects, allowEmptySchema: { nullable: true } },
  );
  dropClosedRefSiblings(document);
  return document;
}
