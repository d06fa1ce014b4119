/**
 * Workflows (docs/WORKFLOWS.md): versioned graphs of steps — prompt runs and knowledge-base
 * searches — that run as one asynchronous unit. The workflow file, its versions, its runs and
 * their events.
 */
import { z } from "zod";
import { channelSchema, environmentNameSchema, slugSchema, tagSchema, uuidSchema } from "./ids.ts";
import { refusingProtoKey } from "./own-keys.ts";
import { pageRequestSchema } from "./pagination.ts";
import { inputDeclarationSchema } from "./prompt.ts";
import {
  metadataFilterSchema,
  SEARCH_QUERY_MAX_BYTES,
  SEARCH_TOP_K_MAX,
  searchModeSchema,
} from "./retrieval.ts";
import { costSchema, createRunRequestSchema, metadataSchema, stepIdSchema, tokenUsageSchema } from "./run.ts";

/** Most steps in one workflow: a graph larger than this is refused at push. */
export const WORKFLOW_MAX_STEPS = 100;
/** Characters of a `when` expression or of one `{{…}}` template expression. */
export const WORKFLOW_EXPRESSION_MAX_CHARS = 1_000;
/** UTF-8 bytes of a workflow file as pushed (its canonical JSON). */
export const WORKFLOW_FILE_MAX_BYTES = 256 * 1024;

/**
 * A step's inputs: values are JSON; every string in them is a template whose `{{expression}}`
 * parts are evaluated (a string that is one whole `{{expression}}` keeps the value's type).
 */
export const stepInputsSchema = refusingProtoKey(
  z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "input names are identifiers"), z.unknown()),
  "reserved: not allowed as an input name",
);

/** A `retrieve:` step: one knowledge-base search; its `query` is a template. */
export const retrieveStepSpecSchema = z.strictObject({
  knowledgeBase: slugSchema,
  query: z.string().min(1).max(SEARCH_QUERY_MAX_BYTES),
  topK: z.number().int().min(1).max(SEARCH_TOP_K_MAX).optional(),
  mode: searchModeSchema.optional(),
  filter: metadataFilterSchema.optional(),
});
export type RetrieveStepSpec = z.infer<typeof retrieveStepSpecSchema>;

/** A prompt reference: `slug`, `slug@<version>`, `slug@<tag>` or `slug@latest`. */
export const PROMPT_REFERENCE_PATTERN = /^[a-z0-9][a-z0-9\-_.]{0,99}(@[A-Za-z0-9][A-Za-z0-9\-_.]{0,99})?$/;

export const workflowStepSchema = z
  .strictObject({
    id: stepIdSchema,
    description: z.string().max(1_000).optional(),
    /** `slug`, `slug@version` or `slug@tag`: the step runs this prompt. */
    prompt: z
      .string()
      .regex(PROMPT_REFERENCE_PATTERN, "prompt must be slug, slug@version or slug@tag")
      .optional(),
    inputs: stepInputsSchema.optional(),
    /** The channel of the step's run in the workflow run's thread (default: the step id). */
    channel: channelSchema.optional(),
    /** A knowledge-base search instead of a prompt. */
    retrieve: retrieveStepSpecSchema.optional(),
    /** CEL over `inputs` and `steps`: false skips the step (and the steps that need its output). */
    when: z.string().min(1).max(WORKFLOW_EXPRESSION_MAX_CHARS).optional(),
    /** A failure of this step does not fail the workflow; its output is then null. */
    continueOnError: z.boolean().optional(),
  })
  .superRefine((step, context) => {
    if ((step.prompt === undefined) === (step.retrieve === undefined)) {
      context.addIssue({ code: "custom", message: "a step has exactly one of prompt or retrieve" });
    }
    if (step.retrieve !== undefined && (step.inputs !== undefined || step.channel !== undefined)) {
      context.addIssue({ code: "custom", message: "inputs and channel belong to prompt steps" });
    }
  });
export type WorkflowStep = z.infer<typeof workflowStepSchema>;

/** A workflow file (YAML or JSON), docs/WORKFLOWS.md "Workflow files". */
export const workflowFileSchema = z.strictObject({
  slug: slugSchema,
  description: z.string().max(10_000).optional(),
  inputs: refusingProtoKey(
    z.record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "input names are identifiers"),
      inputDeclarationSchema,
    ),
    "reserved: not allowed as an input name",
  ).default({}),
  steps: z
    .array(workflowStepSchema)
    .min(1)
    .max(WORKFLOW_MAX_STEPS, `a workflow has at most ${WORKFLOW_MAX_STEPS} steps`),
  /** A template over `inputs` and `steps`; absent: the output of the last step in file order. */
  output: z
    .string()
    .max(WORKFLOW_EXPRESSION_MAX_CHARS * 10)
    .optional(),
  tags: z.array(tagSchema).default([]),
});
export type WorkflowFile = z.infer<typeof workflowFileSchema>;
export type WorkflowFileInput = z.input<typeof workflowFileSchema>;

/** The immutable content of a workflow version (the file minus slug and tags). */
export type WorkflowDefinition = Omit<WorkflowFile, "slug" | "tags">;

/** A stored version of a workflow: its definition, as pushed. */
export const workflowVersionSchema = z
  .object({
    id: uuidSchema,
    slug: slugSchema,
    version: z.number().int().positive(),
    description: z.string().nullable(),
    inputs: z.record(z.string(), inputDeclarationSchema),
    steps: z.array(workflowStepSchema),
    output: z.string().nullable(),
    tags: z.array(z.string()),
    createdAt: z.iso.datetime(),
    /** SHA-256 (hex) of the version's canonical content. */
    contentHash: z.string(),
  })
  .meta({ id: "WorkflowVersion" });
export type WorkflowVersion = z.infer<typeof workflowVersionSchema>;

export const workflowSummarySchema = z
  .object({
    id: uuidSchema,
    slug: slugSchema,
    description: z.string().nullable(),
    latestVersion: z.number().int().positive(),
    tags: z.record(z.string(), z.number().int().positive()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "WorkflowSummary" });
export type WorkflowSummary = z.infer<typeof workflowSummarySchema>;

/** What a push answers per file (as a prompt push). */
export const workflowPushResultSchema = z
  .object({
    slug: slugSchema,
    version: z.number().int().positive(),
    id: uuidSchema,
    tags: z.array(z.string()),
    created: z.boolean(),
  })
  .meta({ id: "WorkflowPushResult" });
export type WorkflowPushResult = z.infer<typeof workflowPushResultSchema>;

/** PUT /api/v1/workflows/{slug}/tags/{tag} */
export const setWorkflowTagRequestSchema = z.strictObject({ version: z.number().int().positive() });

// ------------------------------------------------------------------ runs

/** The create-run body of a prompt run, less `channel` (each step has its own). */
export const createWorkflowRunRequestSchema = createRunRequestSchema
  .omit({ channel: true })
  .meta({ id: "CreateWorkflowRunRequest" });
export type CreateWorkflowRunRequest = z.infer<typeof createWorkflowRunRequestSchema>;

export const workflowRunStatusSchema = z.enum(["pending", "completed", "failed"]);
export type WorkflowRunStatus = z.infer<typeof workflowRunStatusSchema>;
/** While pending: queued (no step started), running, requires_action (a step waits for tool outputs). */
export const workflowRunPhaseSchema = z.enum(["queued", "running", "requires_action"]);
export type WorkflowRunPhase = z.infer<typeof workflowRunPhaseSchema>;

export const workflowStepStatusSchema = z.enum([
  "pending",
  "running",
  "completed",
  "failed",
  "skipped",
  "cancelled",
]);
export type WorkflowStepStatus = z.infer<typeof workflowStepStatusSchema>;

/** The error of a workflow run ended by a cancel (and of its cancelled steps' runs). */
export const WORKFLOW_CANCELLED = "cancelled";

export const workflowRunStepSchema = z
  .object({
    id: stepIdSchema,
    kind: z.enum(["prompt", "retrieve"]),
    status: workflowStepStatusSchema,
    /** The step's prompt run (a prompt step once started), else null. */
    runId: uuidSchema.nullable(),
    /** A prompt step's run output; a retrieve step's text (`[n] file: text` lines); null otherwise. */
    output: z.string().nullable(),
    /** A prompt step's outputJson; a retrieve step's `{chunks: [...]}`; null otherwise. */
    outputJson: z.unknown().nullable(),
    error: z.string().nullable(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "WorkflowRunStep" });
export type WorkflowRunStep = z.infer<typeof workflowRunStepSchema>;

export const workflowRefSchema = z.object({
  slug: slugSchema,
  version: z.number().int().positive(),
  id: uuidSchema,
});

export const workflowRunSchema = z
  .object({
    id: uuidSchema,
    status: workflowRunStatusSchema,
    phase: workflowRunPhaseSchema.nullable().meta({ description: "While pending; null once ended." }),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    output: z.string().nullable(),
    outputJson: z.unknown().nullable(),
    error: z.string().nullable(),
    tokenUsage: tokenUsageSchema.nullable(),
    cost: costSchema.nullable(),
    thread: uuidSchema,
    workflow: workflowRefSchema,
    priority: z.enum(["onsite", "normal", "low"]),
    environment: z.string(),
    metadata: metadataSchema,
    inputs: z.record(z.string(), z.unknown()),
    steps: z.array(workflowRunStepSchema),
  })
  .meta({ id: "WorkflowRun" });
export type WorkflowRun = z.infer<typeof workflowRunSchema>;

/** GET /api/v1/workflowruns and tRPC workflowRun.list: filters combined with AND, newest first. */
export const workflowRunListFiltersSchema = z.object({
  workflow: slugSchema.optional(),
  version: z.number().int().min(1).optional(),
  status: workflowRunStatusSchema.optional(),
  thread: uuidSchema.optional(),
  environment: environmentNameSchema.optional(),
  createdAfter: z.iso.datetime({ offset: true }).optional(),
  createdBefore: z.iso.datetime({ offset: true }).optional(),
});
export type WorkflowRunListFilters = z.infer<typeof workflowRunListFiltersSchema>;
export const workflowRunListRequestSchema = pageRequestSchema
  .extend(workflowRunListFiltersSchema.shape)
  .strict()
  .superRefine((filters, context) => {
    if (filters.version !== undefined && filters.workflow === undefined) {
      context.addIssue({ code: "custom", path: ["version"], message: "version needs workflow" });
    }
  });
export type WorkflowRunListRequest = z.input<typeof workflowRunListRequestSchema>;
export const WORKFLOW_RUN_LIST_QUERY_NAMES = [
  "workflow",
  "version",
  "status",
  "thread",
  "environment",
  "createdAfter",
  "createdBefore",
  "cursor",
  "limit",
] as const;

// ------------------------------------------------------------------ events

export const workflowStartedEventSchema = z.object({
  workflowRunId: uuidSchema,
  workflow: z.object({ slug: slugSchema, version: z.number().int().positive() }),
});
export const workflowStepEventSchema = z.object({
  workflowRunId: uuidSchema,
  step: stepIdSchema,
  status: workflowStepStatusSchema,
  runId: uuidSchema.nullable(),
});
export const workflowCompletedEventSchema = z.object({
  workflowRunId: uuidSchema,
  output: z.string(),
  /** Always sent (possibly null); optional in the type because JSON cannot tell unknown from absent. */
  outputJson: z.unknown().optional(),
  tokenUsage: tokenUsageSchema,
  cost: costSchema,
  finishedAt: z.iso.datetime(),
});
export const workflowFailedEventSchema = z.object({
  workflowRunId: uuidSchema,
  error: z.string(),
  cost: costSchema.nullable(),
  finishedAt: z.iso.datetime(),
});
export type WorkflowStartedEvent = z.infer<typeof workflowStartedEventSchema>;
export type WorkflowStepEvent = z.infer<typeof workflowStepEventSchema>;
export type WorkflowCompletedEvent = z.infer<typeof workflowCompletedEventSchema>;
export type WorkflowFailedEvent = z.infer<typeof workflowFailedEventSchema>;

// ------------------------------------------------------------------ tRPC inputs

export const workflowVersionInputSchema = z.object({ slug: slugSchema, version: z.string().min(1).max(100) });
export const workflowTagInputSchema = z.object({
  slug: slugSchema,
  tag: tagSchema,
  version: z.number().int().positive(),
});
export const createWorkflowRunInputSchema = z.object({
  slug: slugSchema,
  version: z.string().min(1).max(100).default("latest"),
  body: z.unknown(),
  idempotencyKey: z.string().optional(),
});
export const workflowRunIdInputSchema = z.object({ id: z.string().max(100) });
