import {
  promptRunSchema,
  promptTagMovedDataSchema,
  promptVersionCreatedDataSchema,
  type WebhookEventType,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { jsonBody } from "./error-responses.ts";

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

const webhookEvents: Array<{
  type: WebhookEventType;
  component: string;
  description: string;
  data: z.ZodType;
  timestamp: string;
}> = [
  {
    type: "run.completed",
    component: "RunCompletedWebhook",
    description: "A run of the webhook's environment completed; `data` is the completed PromptRun.",
    data: promptRunSchema,
    timestamp: "When the run ended.",
  },
  {
    type: "run.failed",
    component: "RunFailedWebhook",
    description:
      "A run of the webhook's environment failed or was cancelled; `data` is the failed PromptRun.",
    data: promptRunSchema,
    timestamp: "When the run ended.",
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
];

const webhookOperation = (event: (typeof webhookEvents)[number]) => ({
  post: {
    operationId: `${event.type.replace(".", "_")}_webhook`,
    tags: ["Webhooks"],
    summary: `\`${event.type}\` delivery`,
    description: `${event.description} Sent as a signed POST to the webhook's URL, at least once, on the retry schedule (docs/PRODUCT-RULES.md "Environments, env vars and webhooks").`,
    security: [],
    requestParams: { header: signatureHeaders },
    requestBody: {
      required: true,
      content: jsonBody(
        z
          .object({
            type: z.literal(event.type).meta({ description: "The event." }),
            timestamp: z.iso.datetime().meta({ description: event.timestamp }),
            data: event.data,
          })
          .meta({ id: event.component }),
      ),
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
