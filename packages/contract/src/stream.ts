import { z } from "zod";
import { uuidSchema } from "./ids.ts";
import { runRetrievalEventSchema } from "./retrieval.ts";
import {
  costSchema,
  finishReasonSchema,
  promptRefSchema,
  requiredActionSchema,
  runMemorySchema,
  tokenUsageSchema,
  toolCallSchema,
} from "./run.ts";
import {
  workflowCompletedEventSchema,
  workflowFailedEventSchema,
  workflowStartedEventSchema,
  workflowStepEventSchema,
} from "./workflow.ts";

export const streamTokenResponseSchema = z
  .object({
    token: z
      .string()
      .meta({ description: "Bearer token for the streaming endpoint; read access to one thread only." }),
    expiresAt: z.iso.datetime(),
    url: z.string().meta({ description: "{stream_url}/stream/<thread_id>" }),
  })
  .meta({ id: "StreamTokenResponse" });
export type StreamTokenResponse = z.infer<typeof streamTokenResponseSchema>;

/** SSE event names and data shapes (docs/PRODUCT-RULES.md "Live streaming"). */
export const readyEventSchema = z.object({ thread: uuidSchema });
export const runStartedEventSchema = z.object({
  runId: uuidSchema,
  thread: uuidSchema,
  channel: z.string(),
  prompt: promptRefSchema.pick({ slug: true, version: true }),
  /** 1 on the first attempt. A later run.started for the same run means a retry: drop its text so far (token index restarts at 0). */
  attempt: z.number().int().positive().optional(),
});
export const runTokenEventSchema = z.object({
  runId: uuidSchema,
  channel: z.string(),
  index: z.number().int().nonnegative(),
  delta: z.string(),
});
export const runCompletedEventSchema = z.object({
  runId: uuidSchema,
  output: z.string(),
  /** Present (possibly null) since structured output; absent from older servers. */
  outputJson: z.unknown().optional().meta({
    description: "The run's parsed JSON output (a prompt with output.format json_schema), else null.",
  }),
  finishReason: finishReasonSchema
    .nullable()
    .optional()
    .meta({ description: "Why the last model call stopped (as PromptRun.finishReason)." }),
  memory: runMemorySchema
    .nullable()
    .optional()
    .meta({ description: "Thread history the run carried and left out (as PromptRun.memory)." }),
  tokenUsage: tokenUsageSchema,
  cost: costSchema,
  finishedAt: z.iso.datetime(),
});
export const runFailedEventSchema = z.object({
  runId: uuidSchema,
  error: z.string(),
  cost: costSchema.nullable(),
  finishedAt: z.iso.datetime(),
});
/** A model call of the run starts (`step` counts from 0). */
export const runStepEventSchema = z.object({ runId: uuidSchema, step: z.number().int().nonnegative() });
/** The model asked for a tool (sent once its step has been stored). */
export const runToolCallEventSchema = z.object({
  runId: uuidSchema,
  step: z.number().int().nonnegative(),
  toolCall: toolCallSchema,
});
/** A tool call has its result (the output itself is in the run's steps). */
export const runToolResultEventSchema = z.object({
  runId: uuidSchema,
  step: z.number().int().nonnegative(),
  toolCallId: z.string(),
  name: z.string(),
  isError: z.boolean(),
});
/** The run paused for the caller's tool outputs. */
export const runRequiresActionEventSchema = z.object({
  runId: uuidSchema,
  requiredAction: requiredActionSchema,
});
/** Sent when Last-Event-ID is older than the replay buffer: the client must resynchronise. */
export const resetEventSchema = z.object({ thread: uuidSchema, reason: z.string() });
/**
 * Sent before the server closes a stream on purpose: shutdown, slow consumer, token expiry, the
 * tenant's subscription deactivated, or the API key that minted the token revoked.
 */
export const endEventSchema = z.object({
  reason: z.enum(["shutdown", "slow_consumer", "token_expired", "tenant_inactive", "key_revoked"]),
});

export const threadEventSchemas = {
  "run.started": runStartedEventSchema,
  "run.token": runTokenEventSchema,
  "run.completed": runCompletedEventSchema,
  "run.failed": runFailedEventSchema,
  "run.step": runStepEventSchema,
  "run.tool_call": runToolCallEventSchema,
  "run.tool_result": runToolResultEventSchema,
  "run.requires_action": runRequiresActionEventSchema,
  "run.retrieval": runRetrievalEventSchema,
  "workflow.started": workflowStartedEventSchema,
  "workflow.step": workflowStepEventSchema,
  "workflow.completed": workflowCompletedEventSchema,
  "workflow.failed": workflowFailedEventSchema,
} as const;

/** Run events published inside a thread (what the engine emits). */
export type ThreadEvent =
  | { type: "run.started"; data: z.infer<typeof runStartedEventSchema> }
  | { type: "run.token"; data: z.infer<typeof runTokenEventSchema> }
  | { type: "run.completed"; data: z.infer<typeof runCompletedEventSchema> }
  | { type: "run.failed"; data: z.infer<typeof runFailedEventSchema> }
  | { type: "run.step"; data: z.infer<typeof runStepEventSchema> }
  | { type: "run.tool_call"; data: z.infer<typeof runToolCallEventSchema> }
  | { type: "run.tool_result"; data: z.infer<typeof runToolResultEventSchema> }
  | { type: "run.requires_action"; data: z.infer<typeof runRequiresActionEventSchema> }
  | { type: "run.retrieval"; data: z.infer<typeof runRetrievalEventSchema> }
  | { type: "workflow.started"; data: z.infer<typeof workflowStartedEventSchema> }
  | { type: "workflow.step"; data: z.infer<typeof workflowStepEventSchema> }
  | { type: "workflow.completed"; data: z.infer<typeof workflowCompletedEventSchema> }
  | { type: "workflow.failed"; data: z.infer<typeof workflowFailedEventSchema> };
export type ThreadEventType = ThreadEvent["type"];

/** Everything a stream subscriber can receive. */
export type StreamEvent =
  | { type: "ready"; data: z.infer<typeof readyEventSchema> }
  | { type: "reset"; data: z.infer<typeof resetEventSchema> }
  | { type: "end"; data: z.infer<typeof endEventSchema> }
  | ThreadEvent;
export type StreamEventType = StreamEvent["type"];

/** A thread event as delivered: with its SSE id. */
export type StreamEnvelope = StreamEvent & { id: string };

export const streamEventTypes = [
  "ready",
  "reset",
  "end",
  "run.started",
  "run.token",
  "run.completed",
  "run.failed",
  "run.step",
  "run.tool_call",
  "run.tool_result",
  "run.requires_action",
  "run.retrieval",
  "workflow.started",
  "workflow.step",
  "workflow.completed",
  "workflow.failed",
] as const;

const streamEventDataSchemas: Record<StreamEventType, z.ZodType> = {
  ready: readyEventSchema,
  reset: resetEventSchema,
  end: endEventSchema,
  ...threadEventSchemas,
};

/** Parses one SSE message (event name + JSON data) into a typed event; null for unknown names. */
export function parseStreamEvent(event: string, data: string): StreamEvent | null {
  const schema = streamEventDataSchemas[event as StreamEventType];
  if (!schema) return null;
  return { type: event, data: schema.parse(JSON.parse(data)) } as StreamEvent;
}
