import { z } from "zod";
import { channelSchema, environmentNameSchema, uuidSchema } from "./ids.ts";
import { refusingProtoKey } from "./own-keys.ts";
import { citationSchema, runRetrievalSchema } from "./retrieval.ts";

export const prioritySchema = z.enum(["onsite", "normal", "low"]);
export type Priority = z.infer<typeof prioritySchema>;

export const runStatusSchema = z.enum(["pending", "completed", "failed"]);
export type RunStatus = z.infer<typeof runStatusSchema>;

export const ENV_VARS_MAX_ENTRIES = 50;
export const ENV_VARS_MAX_BYTES = 65_536;
export const ENV_VAR_KEY_PATTERN = /^[A-Z][A-Z0-9_]*$/;
export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 64;
export const METADATA_MAX_VALUE_LENGTH = 1_000;
export const METADATA_MAX_ARRAY_LENGTH = 50;

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).byteLength;

/** Values are strings; keys UPPER_CASE; ≤ 50 entries and ≤ 65,536 UTF-8 bytes of keys + values. */
export const envVarsSchema = refusingProtoKey(
  z
    .record(z.string(), z.string({ error: "envVars values must be strings" }))
    .superRefine((envVars, context) => {
      const keys = Object.keys(envVars);
      for (const key of keys) {
        if (!ENV_VAR_KEY_PATTERN.test(key)) {
          context.addIssue({
            code: "custom",
            message: `envVars key '${key}' must be UPPER_CASE (^[A-Z][A-Z0-9_]*$)`,
          });
        }
      }
      if (keys.length > ENV_VARS_MAX_ENTRIES) {
        context.addIssue({
          code: "custom",
          message: `envVars has ${keys.length} entries; at most ${ENV_VARS_MAX_ENTRIES} are allowed`,
        });
      }
      const bytes = keys.reduce((sum, key) => sum + utf8Bytes(key) + utf8Bytes(envVars[key] ?? ""), 0);
      if (bytes > ENV_VARS_MAX_BYTES) {
        context.addIssue({
          code: "custom",
          message: `envVars is ${bytes} bytes; at most ${ENV_VARS_MAX_BYTES} bytes (keys + values, UTF-8) are allowed`,
        });
      }
    })
    .meta({
      description:
        "Runtime environment-variable overrides. UPPER_CASE keys, string values, at most 50 entries and 64 KB in total.",
    }),
  "must be UPPER_CASE (^[A-Z][A-Z0-9_]*$)",
);

const metadataValueSchema = z.union([
  z
    .string()
    .max(
      METADATA_MAX_VALUE_LENGTH,
      `metadata values must be at most ${METADATA_MAX_VALUE_LENGTH} characters`,
    ),
  z
    .array(
      z
        .string()
        .max(
          METADATA_MAX_VALUE_LENGTH,
          `metadata values must be at most ${METADATA_MAX_VALUE_LENGTH} characters`,
        ),
    )
    .max(METADATA_MAX_ARRAY_LENGTH, `metadata arrays must have at most ${METADATA_MAX_ARRAY_LENGTH} items`),
]);

export const metadataSchema = refusingProtoKey(
  z
    .record(
      z
        .string()
        .min(1)
        .max(METADATA_MAX_KEY_LENGTH, `metadata keys must be at most ${METADATA_MAX_KEY_LENGTH} characters`),
      metadataValueSchema,
    )
    .refine((metadata) => Object.keys(metadata).length <= METADATA_MAX_KEYS, {
      message: `metadata must have at most ${METADATA_MAX_KEYS} keys`,
    })
    .meta({ description: "Arbitrary key-value metadata. Each value is a string or an array of strings." }),
);
export type Metadata = z.infer<typeof metadataSchema>;

/** Input values are JSON; their types are checked against the prompt version's declared inputs. */
export const inputsSchema = refusingProtoKey(
  z.record(z.string(), z.unknown()).meta({ description: "Map from input variable name to value." }),
  "unknown input (no prompt declares an input named '__proto__')",
);

export const createRunRequestSchema = z
  .strictObject({
    inputs: inputsSchema,
    thread: uuidSchema
      .nullish()
      .meta({ description: "Thread id to continue; a new thread starts when omitted." }),
    priority: prioritySchema.optional().meta({ description: "Queue class, default normal." }),
    environment: environmentNameSchema
      .nullish()
      .meta({ description: "Environment name, default production." }),
    envVars: envVarsSchema.optional(),
    metadata: metadataSchema.optional(),
    channel: channelSchema
      .optional()
      .meta({ description: "Memory channel within the thread, default 'default'." }),
  })
  .meta({ id: "CreatePromptRunRequest" });
export type CreateRunRequest = z.infer<typeof createRunRequestSchema>;

/** Printable ASCII, 1–255 characters (what Idempotency-Key implementations commonly accept); REST header and tRPC field alike. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_RULE = "Idempotency-Key must be 1 to 255 printable ASCII characters";
export const idempotencyKeySchema = z.string().regex(IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE);

export const createRunResponseSchema = z
  .object({ id: uuidSchema, thread: uuidSchema })
  .meta({ id: "CreatePromptRunResponse" });
export type CreateRunResponse = z.infer<typeof createRunResponseSchema>;

export const tokenUsageSchema = z
  .object({
    input: z.number(),
    inputCached: z.number(),
    output: z.number(),
    reasoning: z.number(),
    total: z.number(),
  })
  .meta({
    id: "TokenUsage",
    description: "input includes inputCached; output includes reasoning; total = input + output.",
  });
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

export const costBlockSchema = z
  .object({
    input: z.number(),
    cachedInput: z.number(),
    output: z.number(),
    webSearch: z.number(),
    total: z.number(),
    priced: z
      .boolean()
      .optional()
      .meta({ description: "false when the model has no known price (the figures are then 0 but unknown)." }),
  })
  .meta({ id: "CostBlock", description: "US dollars." });
export type CostBlock = z.infer<typeof costBlockSchema>;

export const costSchema = z
  .object({
    success: costBlockSchema,
    retries: costBlockSchema,
    total: z.number(),
    currency: z.literal("USD").optional(),
  })
  .meta({ id: "Cost", description: "Cost breakdown in US dollars; total = success.total + retries.total." });
export type Cost = z.infer<typeof costSchema>;

export const promptRefSchema = z.object({
  slug: z.string(),
  version: z.number().int(),
  id: uuidSchema,
});

/** Why the (last) model call stopped, in the AI SDK's unified terms. */
export const finishReasonSchema = z.enum([
  "stop",
  "length",
  "tool-calls",
  "content-filter",
  "error",
  "other",
]);
export type FinishReason = z.infer<typeof finishReasonSchema>;

/** Where a pending run is; null once it has ended. */
export const runPhaseSchema = z.enum(["queued", "running", "requires_action"]);
export type RunPhase = z.infer<typeof runPhaseSchema>;

/** How much thread history the run carried, and how many older messages it left out. */
export const runMemorySchema = z
  .object({
    messages: z.number().int().nonnegative().meta({
      description: "Thread history messages the run carried (the prompt's own messages not counted).",
    }),
    dropped: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: "Older history messages left out by the prompt's memory window." }),
  })
  .meta({
    id: "RunMemory",
    description: "How much of the thread's history the run carried, and how much it left out.",
  });
export type RunMemory = z.infer<typeof runMemorySchema>;

/** One tool call a model asked for; `arguments` is a JSON object (`{}` when the model sent none or garbage). */
export const toolCallSchema = z
  .object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()) })
  .meta({ id: "ToolCall" });
export type ToolCall = z.infer<typeof toolCallSchema>;

export const toolResultSchema = z
  .object({
    toolCallId: z.string(),
    name: z.string(),
    output: z.unknown().meta({ description: "A string or any JSON value; cut to 64 KB (`…[truncated]`)." }),
    isError: z.boolean(),
    executedBy: z.enum(["server", "client"]),
  })
  .meta({ id: "ToolResult" });
export type ToolResult = z.infer<typeof toolResultSchema>;

/** One model call of a run (docs/TOOLS.md). */
export const runStepSchema = z
  .object({
    index: z.number().int().nonnegative(),
    model: z.string(),
    text: z.string(),
    toolCalls: z.array(toolCallSchema),
    toolResults: z.array(toolResultSchema),
    finishReason: finishReasonSchema.nullable(),
    usage: tokenUsageSchema,
    cost: costSchema.meta({
      description: "This step's successful attempt under success, its failed attempts under retries.",
    }),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
  })
  .meta({ id: "RunStep" });
export type RunStep = z.infer<typeof runStepSchema>;

export const requiredActionSchema = z
  .object({
    type: z.literal("submit_tool_outputs"),
    toolCalls: z.array(toolCallSchema),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: "RequiredAction" });
export type RequiredAction = z.infer<typeof requiredActionSchema>;

/** UTF-8 bytes of one submitted tool output (its JSON when not a string). */
export const TOOL_OUTPUT_MAX_BYTES = 256 * 1024;
/** A tool result is kept (and sent to the model) up to this many bytes. */
export const TOOL_RESULT_KEPT_BYTES = 64 * 1024;
/** Tool calls one step may ask for (a model asking for more fails the run). */
export const MAX_TOOL_CALLS_PER_STEP = 64;

/** POST /api/v1/promptruns/{id}/tool-outputs. */
export const submitToolOutputsRequestSchema = z
  .strictObject({
    toolOutputs: z
      .array(
        z.strictObject({
          toolCallId: z.string().min(1).max(200),
          output: z.unknown().meta({ description: "A string or any JSON value, at most 256 KB." }),
        }),
      )
      .min(1)
      .max(MAX_TOOL_CALLS_PER_STEP),
  })
  .meta({ id: "SubmitToolOutputsRequest" });
export type SubmitToolOutputsRequest = z.infer<typeof submitToolOutputsRequestSchema>;

export const STEP_ID_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;
/** A workflow step's id (it names the step's channel). Here, not in workflow.ts, so PromptRun can name it without a cycle. */
export const stepIdSchema = z.string().regex(STEP_ID_PATTERN, "step ids must match ^[a-z][a-z0-9_-]{0,62}$");

/** A prompt run's place in a workflow run (PromptRun.workflowRun, docs/WORKFLOWS.md). */
export const workflowRunLinkSchema = z
  .object({ id: uuidSchema, step: stepIdSchema })
  .meta({ id: "WorkflowRunLink" });
export type WorkflowRunLink = z.infer<typeof workflowRunLinkSchema>;

/** The REST contract's PromptRun plus documented extension fields (docs/PRODUCT-RULES.md "Runs"). */
export const promptRunSchema = z
  .object({
    id: uuidSchema,
    status: runStatusSchema,
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
    output: z.string().nullable(),
    error: z.string().nullable(),
    tokenUsage: tokenUsageSchema.nullable(),
    cost: costSchema.nullable(),
    // Extensions (docs/PRODUCT-RULES.md "Runs": extra fields allowed; the original ones keep their meaning).
    thread: uuidSchema,
    channel: z.string(),
    prompt: promptRefSchema,
    priority: prioritySchema,
    environment: z.string(),
    metadata: metadataSchema,
    startedAt: z.iso.datetime().nullable(),
    attempts: z.number().int(),
    outputJson: z.unknown().nullable().meta({
      description:
        "The parsed output when the prompt has output.format json_schema (docs/PRODUCT-RULES.md), else null.",
    }),
    finishReason: finishReasonSchema.nullable().meta({
      description:
        "Why the last model call stopped: stop, length (output token limit), tool-calls, content-filter, error or other; null while pending or when no call answered.",
    }),
    phase: runPhaseSchema.nullable().meta({
      description:
        "While pending: queued until an attempt starts, running while executing, requires_action while waiting for the caller's tool outputs. Null once ended.",
    }),
    requiredAction: requiredActionSchema.nullable().meta({
      description: "The client tool calls the run waits for while its phase is requires_action, else null.",
    }),
    steps: z.array(runStepSchema).meta({
      description: "One entry per model call that answered, in order ([] before the first one).",
    }),
    retrieval: z.array(runRetrievalSchema).meta({
      description:
        "The knowledge-base searches the run made (its prompt's retrieval, then knowledge_base tool calls), in order; [] when none.",
    }),
    citations: z.array(citationSchema).meta({
      description:
        "One per distinct [n] marker of the output that refers to a retrieved chunk; [] while pending or when none.",
    }),
    memory: runMemorySchema.nullable().meta({
      description:
        "Thread history the run carried and left out; set when the run ends, null while pending (and on a run that ended before its messages were built).",
    }),
    workflowRun: workflowRunLinkSchema.nullable().meta({
      description: "The workflow run and step this run is a step of; null for a run created on its own.",
    }),
  })
  .meta({ id: "PromptRun" });
export type PromptRun = z.infer<typeof promptRunSchema>;
