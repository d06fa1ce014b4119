import { z } from "zod";
import { channelSchema, uuidSchema } from "./ids.ts";
import { pageRequestSchema } from "./pagination.ts";
import { contentPartSchema } from "./prompt.ts";

/** An assistant's tool call as thread memory keeps it. */
export const toolCallPartSchema = z.object({
  type: z.literal("tool-call"),
  toolCallId: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
/** A tool's result as thread memory keeps it (a message of role `tool`). */
export const toolResultPartSchema = z.object({
  type: z.literal("tool-result"),
  toolCallId: z.string(),
  name: z.string(),
  output: z.unknown(),
  isError: z.boolean(),
});
/** Parts of a stored message: content parts, and the tool exchange of a run that called tools. */
export const memoryPartSchema = z.discriminatedUnion("type", [
  ...contentPartSchema.options,
  toolCallPartSchema,
  toolResultPartSchema,
]);
export type ToolCallPart = z.infer<typeof toolCallPartSchema>;
export type ToolResultPart = z.infer<typeof toolResultPartSchema>;
export type MemoryPart = z.infer<typeof memoryPartSchema>;

/**
 * A message as a model receives it: a prompt's message, a history row, or a step of a tool run
 * (an assistant's tool calls, a `tool` message of results).
 */
export const chatMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(memoryPartSchema)]),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

/** Messages one import may carry (docs/PRODUCT-RULES.md "Thread memory"). */
export const THREAD_IMPORT_MAX_MESSAGES = 1_000;
/** UTF-8 bytes of one imported message's content: 256 KiB. */
export const THREAD_IMPORT_MAX_CONTENT_BYTES = 256 * 1024;
/** Characters of an imported message's externalId. */
export const THREAD_IMPORT_MAX_EXTERNAL_ID_LENGTH = 200;

/** GET /api/v1/threads/{thread}/messages: the channel (default `default`) and the page. */
export const threadMessagesRequestSchema = pageRequestSchema
  .extend({ channel: channelSchema.default("default") })
  .strict();
export type ThreadMessagesRequest = z.input<typeof threadMessagesRequestSchema>;

/** One message of a thread's memory, oldest first. */
export const threadMemoryMessageSchema = z.object({
  /** The run that wrote it; null for an imported message. */
  runId: uuidSchema.nullable(),
  channel: z.string(),
  role: z.enum(["user", "assistant", "tool"]),
  /** The text (of a message of parts: its text parts, joined). */
  content: z.string(),
  /** The parts, when the message was more than text (images, files, tool calls, tool results). */
  parts: z.array(memoryPartSchema).optional(),
  /** The caller's id of an imported message, when it gave one. */
  externalId: z.string().optional(),
  createdAt: z.iso.datetime(),
});
export type ThreadMemoryMessage = z.infer<typeof threadMemoryMessageSchema>;

export const threadMessagesPageSchema = z.object({
  items: z.array(threadMemoryMessageSchema),
  nextCursor: z.string().nullable(),
});
export type ThreadMessagesPage = z.infer<typeof threadMessagesPageSchema>;

const utf8 = new TextEncoder();
const importedMessageSchema = z.strictObject({
  role: z.enum(["user", "assistant"]),
  content: z.string().refine((content) => utf8.encode(content).length <= THREAD_IMPORT_MAX_CONTENT_BYTES, {
    message: `content exceeds ${THREAD_IMPORT_MAX_CONTENT_BYTES} bytes`,
  }),
  externalId: z.string().min(1).max(THREAD_IMPORT_MAX_EXTERNAL_ID_LENGTH).optional(),
  createdAt: z.iso.datetime({ offset: true }).optional(),
});

/** POST /api/v1/threads/{thread}/messages: 1–1,000 messages into one channel. */
export const threadImportRequestSchema = z.strictObject({
  channel: channelSchema.optional(),
  messages: z.array(importedMessageSchema).min(1).max(THREAD_IMPORT_MAX_MESSAGES),
});
export type ThreadImportRequest = z.input<typeof threadImportRequestSchema>;

export const threadImportResultSchema = z.object({
  imported: z.number().int().min(0),
  skipped: z.number().int().min(0),
});
export type ThreadImportResult = z.infer<typeof threadImportResultSchema>;

/** tRPC thread.import: the thread beside the body. */
export const threadImportInputSchema = threadImportRequestSchema.extend({ thread: uuidSchema });

/** tRPC thread.messages: the thread beside the query. */
export const threadMessagesInputSchema = z.object({
  thread: uuidSchema,
  channel: channelSchema.optional(),
  cursor: z.string().max(200).nullish(),
  limit: z.number().int().min(1).max(200).optional(),
});
