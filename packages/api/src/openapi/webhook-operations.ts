import {
  knowledgeDocumentSchema,
  promptTagMovedDataSchema,
  promptVersionCreatedDataSchema,
  type WebhookEventType,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";

/** Standard Webhooks headers of every delivery (packages/core/src/webhooks/send-delivery.ts). */
const signatureHeaders = z.object({
  "webhook-id": z.string().meta({
    description: "The delivery id: the same on every attempt of one delivery (deduplicate on it).",
  }),
  "webhook-timestamp": z.string().meta({ description: "Unix seconds of this attempt." }),
  "webhook-signature": z.string().meta({
    description:
      "`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook's `whsec_` secret (Standard Webhooks); verify it before trusting the body.",
  }),
});

/**
 * The PromptRun of a run event (and the WorkflowRun of a workflow event), by reference: a
 * webhook body is a request body (an input to zod-openapi) but what the server sends, so it
 * must be the very component that get_prompt_run (get_workflow_run) answers, open to new
 * fields, not an input variant of it.
 */
interface ComponentRef {
  $ref: string;
}
const PROMPT_RUN: ComponentRef = { $ref: "#/components/schemas/PromptRun" };
const WORKFLOW_RUN: ComponentRef = { $ref: "#/components/schemas/WorkflowRun" };

const isComponentRef = (data: z.ZodType | ComponentRef): data is ComponentRef => "$ref" in data;

const webhookEvents: Array<{
  type: WebhookEventType;
  component: string;
  description: string;
  data: z.ZodType | ComponentRef;
  timestamp: string;
}> = [
  {
    type: "run.completed",
    component: "RunCompletedWebhook",
    description: "A run of the webhook's environment completed; `data` is the completed PromptRun.",
    data: PROMPT_RUN,
    timestamp: "When the run ended.",
  },
  {
    type: "run.failed",
    component: "RunFailedWebhook",
    description:
      "A run of the webhook's environment failed or was cancelled; `data` is the failed PromptRun.",
    data: PROMPT_RUN,
    timestamp: "When the run ended.",
  },
  {
    type: "run.requires_action",
    component: "RunRequiresActionWebhook",
    description:
      "A run of the webhook's environment paused for client tool outputs; `data` is the pending PromptRun with `phase: requires_action` and its `requiredAction` (answer it with submit_tool_outputs). Only webhooks that name this event in their `events`.",
    data: PROMPT_RUN,
    timestamp: "When the run paused.",
  },
  {
    type: "prompt.version.created",
    component: "PromptVersionCreatedWebhook",
    description:
      "A push created a new version of a prompt of the webhook's tenant (any environment; only webhooks that name this event in their `events`); an identical push sends none.",
    data: promptVersionCreatedDataSchema,
    timestamp: "When the version was pushed.",
  },
  {
    type: "prompt.tag.moved",
    component: "PromptTagMovedWebhook",
    description:
      "A tag of a prompt of the webhook's tenant now points at another version (a push with tags or a tag call; only webhooks that name this event in their `events`); `previousVersion` is null for a new tag.",
    data: promptTagMovedDataSchema,
    timestamp: "When the tag moved.",
  },
  {
    type: "document.ready",
    component: "DocumentReadyWebhook",
    description:
      "A document of a knowledge base of the webhook's tenant finished ingesting and is searchable (any environment; only webhooks that name this event in their `events`); `data` is the document.",
    data: knowledgeDocumentSchema,
    timestamp: "When the document became ready.",
  },
  {
    type: "document.failed",
    component: "DocumentFailedWebhook",
    description:
      "A document of a knowledge base of the webhook's tenant could not be ingested (extraction or embedding failed; any environment; only webhooks that name this event in their `events`); `data` is the document with its `error`.",
    data: knowledgeDocumentSchema,
    timestamp: "When the document failed.",
  },
  {
    type: "workflow.completed",
    component: "WorkflowCompletedWebhook",
    description:
      "A workflow run of the webhook's environment completed; `data` is the completed WorkflowRun (output, summed usage and cost, every step). Only webhooks that name this event in their `events`.",
    data: WORKFLOW_RUN,
    timestamp: "When the workflow run ended.",
  },
  {
    type: "workflow.failed",
    component: "WorkflowFailedWebhook",
    description:
      "A workflow run of the webhook's environment failed (a step failed, or the run was cancelled); `data` is the failed WorkflowRun with its `error`. Only webhooks that name this event in their `events`.",
    data: WORKFLOW_RUN,
    timestamp: "When the workflow run ended.",
  },
];

type WebhookEvent = (typeof webhookEvents)[number];

const payloadFields = (event: WebhookEvent) => ({
  type: { type: "string", const: event.type, description: "The event." },
  timestamp: { type: "string", format: "date-time", description: event.timestamp },
});

/** The body of an event: a zod schema, or for run events a plain component around the run's. */
const payloadSchema = (event: WebhookEvent) => {
  const { data } = event;
  if (isComponentRef(data)) return { $ref: `#/components/schemas/${event.component}` };
  return z
    .object({
      type: z.literal(event.type).meta({ description: "The event." }),
      timestamp: z.iso.datetime().meta({ description: event.timestamp }),
      data,
    })
    .meta({ id: event.component });
};

/** Components of the run events' bodies (registered beside the generated ones). */
export const webhookPayloadComponents = Object.fromEntries(
  webhookEvents.flatMap((event) => {
    const { data } = event;
    if (!isComponentRef(data)) return [];
    const component = {
      type: "object" as const,
      properties: { ...payloadFields(event), data },
      required: ["type", "timestamp", "data"],
    };
    return [[event.component, component]];
  }),
);

const webhookOperation = (event: WebhookEvent) => ({
  post: {
    operationId: `${event.type.replace(".", "_")}_webhook`,
    tags: ["Webhooks"],
    summary: `\`${event.type}\` delivery`,
    description: `${event.description} Sent as a signed POST to the webhook's URL, at least once, on the retry schedule (docs/PRODUCT-RULES.md "Environments, env vars and webhooks").`,
    security: [],
    requestParams: { header: signatureHeaders },
    requestBody: {
      required: true,
      content: { "application/json": { schema: payloadSchema(event) } },
    },
    responses: {
      "2XX": { description: "Any 2xx status acknowledges the delivery; the body is ignored." },
      default: {
        description:
          "Any other status, a timeout or a network error is a failed attempt, retried on the schedule.",
      },
    },
  },
});

/** OpenAPI 3.1 `webhooks`: every event the server POSTs to a registered webhook. */
export const webhookOperations: ZodOpenApiPathsObject = Object.fromEntries(
  webhookEvents.map((event) => [event.type, webhookOperation(event)]),
);
