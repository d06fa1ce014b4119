import {
  createRunResponseSchema,
  createWorkflowRunRequestSchema,
  pageOf,
  setWorkflowTagRequestSchema,
  slugSchema,
  uuidSchema,
  WORKFLOW_EXPRESSION_MAX_CHARS,
  WORKFLOW_FILE_MAX_BYTES,
  WORKFLOW_MAX_STEPS,
  type WorkflowRun,
  workflowFileSchema,
  workflowPushResultSchema,
  workflowRunListFiltersSchema,
  workflowRunSchema,
  workflowSummarySchema,
  workflowVersionSchema,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import {
  errorResponse,
  errors,
  idempotencyKeyHeader,
  jsonBody,
  rateLimitHeaders,
  storeUnavailableResponse,
} from "./error-responses.ts";

/** The tag of the workflow operations (docs/WORKFLOWS.md). */
export const workflowsTag = {
  name: "Workflows",
  description:
    "Versioned graphs of steps (prompt runs and knowledge-base searches) pushed and tagged like prompts, run as one asynchronous unit with one id, per-step state, a summed cost, cancel, streaming and webhooks.",
};
const tags = [workflowsTag.name];

const workflowFileComponent = workflowFileSchema.meta({
  id: "WorkflowFile",
  unusedIO: "input",
  description: [
    `A workflow file (YAML or JSON, at most ${WORKFLOW_FILE_MAX_BYTES / 1024} KiB as canonical JSON): declared \`inputs\`, at most ${WORKFLOW_MAX_STEPS} \`steps\` and an \`output\` template.`,
    "A step runs a prompt (`prompt: slug`, `slug@version` or `slug@tag`, its `inputs` templates) or searches a knowledge base (`retrieve`).",
    "Templates are strings with `{{expression}}` parts; expressions and `when` are CEL over `inputs` and `steps` (`steps.<id>.output`, `.outputJson`, `.text`, `.status`),",
    `at most ${WORKFLOW_EXPRESSION_MAX_CHARS} characters each. A step depends on the steps its templates and \`when\` name; independent steps run in parallel.`,
    "A false `when` skips the step and the steps that need it; a failed step fails the workflow unless it has `continueOnError: true`.",
    "Absent `output`: the output of the last completed step in file order.",
  ].join(" "),
});
const setTagComponent = setWorkflowTagRequestSchema.meta({
  id: "SetWorkflowTagRequest",
  description: "`version`: the version number the tag should point at.",
});
// The contract names WorkflowVersion, WorkflowSummary, WorkflowPushResult and WorkflowRun itself
// (a described copy would be a second schema under the same id): the operations describe them.
const workflowRunDescription =
  "`pending` (phase `queued` until a step starts, `running`, `requires_action` while a step's prompt run waits for tool outputs), then `completed` or `failed`. While pending: no output, usage or cost. `failed` has an error (`cancelled` after a cancel, `step '<id>' failed: …` after a failed step). Cost and usage are the sums of the steps' runs; each prompt step is an ordinary prompt run (get_prompt_run with its `runId`) on the workflow run's thread.";

const workflowRunPageSchema = pageOf(workflowRunSchema).meta({
  id: "WorkflowRunPage",
  description: "Newest first; `nextCursor` is null on the last page.",
});

const slugParam = slugSchema.meta({ description: "Workflow handle." });
const versionParam = z.string().meta({
  description:
    "A UUID (version id), a version number (`^[1-9][0-9]*$`), `latest`, or otherwise a tag (case-sensitive).",
});
const runIdParam = uuidSchema.meta({ description: "Workflow run id (a UUID)." });
const pageParams = {
  cursor: z
    .string()
    .max(200)
    .optional()
    .meta({ description: "The `nextCursor` of the previous page; an invalid cursor is a 400." }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "Items per page, 1–200 (default 50); anything else is a 400." }),
};

const badQuery = errors[400](
  "An unknown or repeated query parameter, a limit outside 1–200, an invalid cursor; the message names the parameter.",
);
const unknownWorkflow = errorResponse("Unknown or malformed slug, or a workflow of another tenant.");
const unknownRun = errorResponse("Unknown or malformed id, or a workflow run of another tenant.");
const etagHeader = z.string().meta({ description: '`"<contentHash>"` of the version.' });
const cacheControlHeader = z
  .literal("private, no-cache")
  .meta({ description: "Revalidate with If-None-Match: a tag or `latest` may move." });

const filters = workflowRunListFiltersSchema.shape;
const listRunsQuery = z.object({
  workflow: filters.workflow.meta({ description: "Runs of this workflow (slug)." }),
  version: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: "Of `workflow`: this version number." }),
  status: filters.status.meta({ description: "pending, completed or failed." }),
  thread: filters.thread.meta({ description: "Runs of this thread." }),
  environment: filters.environment.meta({ description: "Runs in this environment." }),
  createdAfter: filters.createdAfter.meta({ description: "Created at or after this ISO 8601 date-time." }),
  createdBefore: filters.createdBefore.meta({ description: "Created before this ISO 8601 date-time." }),
  ...pageParams,
});

/** A documented example: a completed two-step workflow run. */
export const completedWorkflowRunExample: WorkflowRun = {
  id: "0196f3c1-1f0e-7a3b-8b7c-1234567890b1",
  status: "completed",
  phase: null,
  createdAt: "2026-01-01T12:00:00.000Z",
  startedAt: "2026-01-01T12:00:00.050Z",
  finishedAt: "2026-01-01T12:00:02.400Z",
  output: "Reset your password from the sign-in page.",
  outputJson: null,
  error: null,
  tokenUsage: { input: 180, inputCached: 0, output: 24, reasoning: 0, total: 204 },
  cost: {
    success: {
      input: 0.00009,
      cachedInput: 0,
      output: 0.0000144,
      webSearch: 0,
      total: 0.0001044,
      priced: true,
    },
    retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
    total: 0.0001044,
  },
  thread: "0196f3c1-1f0e-7a3b-8b7c-1234567890ac",
  workflow: { slug: "triage", version: 3, id: "0196f3c1-1f0e-7a3b-8b7c-1234567890b2" },
  priority: "normal",
  environment: "production",
  metadata: {},
  inputs: { ticket: "I cannot sign in" },
  steps: [
    {
      id: "classify",
      kind: "prompt",
      status: "completed",
      runId: "0196f3c1-1f0e-7a3b-8b7c-1234567890b3",
      output: '{"category":"account"}',
      outputJson: { category: "account" },
      error: null,
      startedAt: "2026-01-01T12:00:00.050Z",
      finishedAt: "2026-01-01T12:00:01.000Z",
    },
    {
      id: "answer",
      kind: "prompt",
      status: "completed",
      runId: "0196f3c1-1f0e-7a3b-8b7c-1234567890b4",
      output: "Reset your password from the sign-in page.",
      outputJson: null,
      error: null,
      startedAt: "2026-01-01T12:00:01.010Z",
      finishedAt: "2026-01-01T12:00:02.400Z",
    },
  ],
};

const workflowRunJson = {
  "application/json": {
    schema: workflowRunSchema,
    examples: {
      completed: { summary: "A completed two-step workflow run", value: completedWorkflowRunExample },
    },
  },
};

const definitionOperations: ZodOpenApiPathsObject = {
  "/api/v1/workflows": {
    get: {
      operationId: "list_workflows",
      tags,
      summary: "List workflows",
      description: "The tenant's workflows. Allowed without an active subscription.",
      requestParams: { query: z.object(pageParams) },
      responses: {
        200: {
          description: "A page of workflow summaries.",
          content: jsonBody(pageOf(workflowSummarySchema).meta({ id: "WorkflowSummaryPage" })),
        },
        400: badQuery,
        401: errors[401],
        405: errors[405]("GET, HEAD, POST"),
        500: errors[500],
      },
    },
    post: {
      operationId: "push_workflow",
      tags,
      summary: "Push a workflow file",
      description:
        "The body is one workflow file as JSON (the schema of the YAML files). The push refuses cycles, unknown steps, undeclared inputs, expressions that do not compile, and prompt references that do not resolve or whose declared inputs the step does not fill. A push whose content equals the newest version's creates nothing (`200`, `created: false`); tags in the file point at the resulting version. Naturally idempotent: no Idempotency-Key.",
      requestBody: { required: true, content: jsonBody(workflowFileComponent) },
      responses: {
        200: {
          description: "The newest version already has this content (`created: false`).",
          content: jsonBody(workflowPushResultSchema),
        },
        201: {
          description: "A new version (`created: true`).",
          content: jsonBody(workflowPushResultSchema),
          headers: z.object({
            Location: z.string().meta({ description: "/api/v1/workflows/{slug}/{version}" }),
          }),
        },
        400: errors[400](
          "Invalid JSON, too deep nesting, or a workflow file the push checks refuse. The message names the field by its path.",
        ),
        401: errors[401],
        403: errors[403],
        405: errors[405]("GET, HEAD, POST"),
        413: errors[413],
        415: errors[415],
        500: errors[500],
      },
    },
  },
  "/api/v1/workflows/{slug}/versions": {
    get: {
      operationId: "list_workflow_versions",
      tags,
      summary: "List a workflow's versions",
      description:
        "Whole versions, newest first. Allowed without an active subscription. (A tag named `versions` is read by number or id instead.)",
      requestParams: { path: z.object({ slug: slugParam }), query: z.object(pageParams) },
      responses: {
        200: {
          description: "A page of versions.",
          content: jsonBody(pageOf(workflowVersionSchema).meta({ id: "WorkflowVersionPage" })),
        },
        400: badQuery,
        401: errors[401],
        404: unknownWorkflow,
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
  "/api/v1/workflows/{slug}/{version}": {
    get: {
      operationId: "get_workflow_version",
      tags,
      summary: "Get a workflow version",
      description:
        "The whole version. `ETag` is the quoted contentHash; `If-None-Match` with it (or a list holding it, or `*`) answers `304` without a body. Allowed without an active subscription.",
      requestParams: {
        path: z.object({ slug: slugParam, version: versionParam }),
        header: z.object({
          "If-None-Match": z
            .string()
            .optional()
            .meta({ description: "An ETag from an earlier answer, a list, or `*`." }),
        }),
      },
      responses: {
        200: {
          description: "The version.",
          content: jsonBody(workflowVersionSchema),
          headers: z.object({ ETag: etagHeader, "Cache-Control": cacheControlHeader }),
        },
        304: {
          description: "The version still has the content of the ETag sent in If-None-Match; no body.",
          headers: z.object({ ETag: etagHeader, "Cache-Control": cacheControlHeader }),
        },
        401: errors[401],
        404: errorResponse("Unknown or malformed slug, version, tag or id, or a workflow of another tenant."),
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
  "/api/v1/workflows/{slug}/tags/{tag}": {
    put: {
      operationId: "set_workflow_tag",
      tags,
      summary: "Move a workflow tag",
      description: "Points the tag at a version (creating the tag when it is new).",
      requestParams: {
        path: z.object({
          slug: slugParam,
          tag: z.string().meta({ description: "Tag name; `latest` and version numbers are not tags (400)." }),
        }),
      },
      requestBody: { required: true, content: jsonBody(setTagComponent) },
      responses: {
        200: {
          description: "The version the tag points at now.",
          content: jsonBody(workflowPushResultSchema),
        },
        400: errors[400](
          "Invalid JSON, a body field (named by its path), or a tag that is `latest` or a version number.",
        ),
        401: errors[401],
        403: errors[403],
        404: errorResponse("Unknown or malformed slug, unknown version, or a workflow of another tenant."),
        405: errors[405]("PUT"),
        413: errors[413],
        415: errors[415],
        500: errors[500],
      },
    },
  },
};

const runOperations: ZodOpenApiPathsObject = {
  "/api/v1/workflows/{slug}/{version}/runs": {
    post: {
      operationId: "create_workflow_run",
      tags,
      summary: "Create a workflow run",
      description:
        "Queues a run of a workflow version: the create-run body of a prompt run without `channel` (each prompt step runs on the thread's channel named after the step, unless the step names one). Prompt references are resolved now and kept for the whole run. Read it with get_workflow_run or follow it on the thread's stream (`workflow.*` events beside the steps' `run.*` events).",
      requestParams: {
        path: z.object({ slug: slugParam, version: versionParam }),
        header: z.object({
          "Idempotency-Key": idempotencyKeyHeader(
            "Replays of the same key return the first response (24 h).",
          ),
        }),
      },
      requestBody: { required: true, content: jsonBody(createWorkflowRunRequestSchema) },
      responses: {
        202: {
          description: "The workflow run is durably queued.",
          content: jsonBody(createRunResponseSchema),
          headers: z.object({
            Location: z.string().meta({ description: "/api/v1/workflowruns/{id}" }),
            "Idempotent-Replayed": z
              .literal("true")
              .optional()
              .meta({ description: "Present when an Idempotency-Key matched an earlier request." }),
            ...rateLimitHeaders,
          }),
        },
        400: errors[400](
          "Invalid JSON, too deep nesting, schema violation (unknown fields included), missing, unknown or mistyped input, envVars or metadata rules, unknown environment, a prompt reference that no longer resolves, or a malformed Idempotency-Key. The message names the field.",
        ),
        401: errors[401],
        403: errors[403],
        404: errorResponse("Unknown or malformed slug, version, tag or id, or a workflow of another tenant."),
        405: errors[405]("POST"),
        409: errorResponse(
          "`Idempotency-Key reused with a different request`: the key was used within 24 h with another body, workflow, version or environment.",
        ),
        413: errors[413],
        415: errors[415],
        429: errors[429],
        500: errors[500],
        503: storeUnavailableResponse,
      },
    },
  },
  "/api/v1/workflowruns": {
    get: {
      operationId: "list_workflow_runs",
      tags,
      summary: "List workflow runs",
      description:
        "Newest first; every filter is optional and they combine with AND. A query parameter not listed here is a `400` naming it. Allowed without an active subscription.",
      requestParams: { query: listRunsQuery },
      responses: {
        200: { description: "One page of workflow runs.", content: jsonBody(workflowRunPageSchema) },
        400: errors[400](
          "An unknown or repeated query parameter, a malformed filter (thread not a UUID, unknown status, version without workflow, a date-time without zone), an invalid cursor or a limit outside 1–200. The message names the parameter.",
        ),
        401: errors[401],
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
  "/api/v1/workflowruns/{id}": {
    get: {
      operationId: "get_workflow_run",
      tags,
      summary: "Get a workflow run",
      description: `With the state of every step. ${workflowRunDescription} Allowed without an active subscription.`,
      requestParams: { path: z.object({ id: runIdParam }) },
      responses: {
        200: { description: "The workflow run.", content: workflowRunJson },
        401: errors[401],
        404: unknownRun,
        405: errors[405]("GET, HEAD"),
        500: errors[500],
      },
    },
  },
  "/api/v1/workflowruns/{id}/cancel": {
    post: {
      operationId: "cancel_workflow_run",
      tags,
      summary: "Cancel a workflow run",
      description:
        "Cancels the running steps; the workflow run ends `failed` with error `cancelled` and its unfinished steps `cancelled`, keeping the cost of what was consumed. Any body is ignored; allowed without an active subscription.",
      requestParams: { path: z.object({ id: runIdParam }) },
      responses: {
        200: { description: "The cancelled workflow run.", content: jsonBody(workflowRunSchema) },
        401: errors[401],
        404: unknownRun,
        405: errors[405]("POST"),
        409: errorResponse("The workflow run has already ended."),
        500: errors[500],
      },
    },
  },
};

/** The workflow routes of docs/WORKFLOWS.md. */
export const workflowOperations: ZodOpenApiPathsObject = { ...definitionOperations, ...runOperations };
