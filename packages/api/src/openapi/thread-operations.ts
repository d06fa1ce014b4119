import {
  channelSchema,
  THREAD_IMPORT_MAX_CONTENT_BYTES,
  THREAD_IMPORT_MAX_MESSAGES,
  threadImportRequestSchema,
  threadImportResultSchema,
  threadMessagesPageSchema,
  uuidSchema,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors, jsonBody } from "./error-responses.ts";

const ALLOW = "GET, HEAD, POST";

const messagesQuery = z.object({
  channel: channelSchema.optional().meta({ description: "The channel; `default` when absent." }),
  cursor: z.string().max(200).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(200).optional().meta({ description: "1–200, default 50." }),
});

const pathParams = z.object({
  thread: uuidSchema.meta({ description: "Thread id (a UUID); the thread need not exist yet." }),
});

const importDescription = [
  `Appends 1–${THREAD_IMPORT_MAX_MESSAGES} messages (each content at most ${THREAD_IMPORT_MAX_CONTENT_BYTES} UTF-8 bytes)`,
  "to the thread's memory of one channel, in one transaction, creating the thread if needed. A message",
  "whose `externalId` the channel already holds (or an earlier message of the same body) is skipped, so",
  "repeating an import adds nothing; messages without `externalId` are always added. That is the only",
  "idempotency (no Idempotency-Key). Imported messages have no run (`runId` null); a later run on the",
  "thread and channel carries them in its memory, each imported message as a unit of its own.",
].join(" ");

/** GET and POST /api/v1/threads/{thread}/messages (docs/PRODUCT-RULES.md "Thread memory"). */
export const threadOperations: ZodOpenApiPathsObject = {
  "/api/v1/threads/{thread}/messages": {
    get: {
      operationId: "list_thread_messages",
      tags: ["Threads"],
      summary: "List a thread's messages",
      description:
        "One channel's memory, oldest first. An unknown thread (or another account's) has no messages: an empty page, not 404. Allowed without an active subscription.",
      requestParams: { path: pathParams, query: messagesQuery },
      responses: {
        200: {
          description: "One page of messages; `nextCursor` is null on the last page.",
          content: jsonBody(threadMessagesPageSchema.meta({ id: "ThreadMessagesPage" })),
        },
        400: errors[400](
          "An unknown query parameter, a malformed channel, an invalid cursor or a limit outside 1–200. The message names the parameter.",
        ),
        401: errors[401],
        404: errorResponse("The thread id is malformed."),
        405: errors[405](ALLOW),
        500: errors[500],
      },
    },
    post: {
      operationId: "import_thread_messages",
      tags: ["Threads"],
      summary: "Import messages into a thread",
      description: importDescription,
      requestParams: { path: pathParams },
      requestBody: { required: true, content: jsonBody(threadImportRequestSchema) },
      responses: {
        201: {
          description: "How many messages were added and how many skipped (also when all were skipped).",
          content: jsonBody(threadImportResultSchema),
        },
        400: errors[400](
          `Invalid JSON or body: a role other than user/assistant, no messages or more than ${THREAD_IMPORT_MAX_MESSAGES}, content too large, a malformed createdAt. The message names the field by its path.`,
        ),
        401: errors[401],
        403: errors[403],
        404: errorResponse("The thread id is malformed."),
        405: errors[405](ALLOW),
        413: errors[413],
        415: errors[415],
        500: errors[500],
      },
    },
  },
};

/** The tag of the thread operations. */
export const threadsTag = {
  name: "Threads",
  description: "A thread's memory: read its messages, import history.",
};
