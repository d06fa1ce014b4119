import {
  type CreateRunResponse,
  type CreateWorkflowRunRequest,
  createRunResponseSchema,
  type Page,
  pageOf,
  type WorkflowFileInput,
  type WorkflowPushResult,
  type WorkflowRun,
  type WorkflowRunListFilters,
  type WorkflowSummary,
  type WorkflowVersion,
  workflowPushResultSchema,
  workflowRunSchema,
  workflowSummarySchema,
  workflowVersionSchema,
} from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { queryString } from "./client-request.ts";
import { delay } from "./delay.ts";
import type { RestRequester } from "./rest-request.ts";

/** Options every workflow call takes. */
export interface WorkflowCallOptions {
  signal?: AbortSignal;
}

/** A page to read: `nextCursor` of the previous page, and its size (1–200, default 50). */
export interface WorkflowPageOptions extends WorkflowCallOptions {
  cursor?: string | null;
  limit?: number;
}

/** Workflow definitions (docs/WORKFLOWS.md "Workflow files"): pushed, versioned and tagged like prompts. */
export interface WorkflowsClient {
  /**
   * Pushes one workflow file (its JSON form); `created` is false when the newest version already
   * has this content. ApiError `invalid` names the path of the first error (a cycle, an unknown
   * step, a `when` that does not compile, a prompt reference that does not resolve, …).
   */
  push(file: WorkflowFileInput, options?: WorkflowCallOptions): Promise<WorkflowPushResult>;
  /** A page of the tenant's workflows. */
  list(page?: WorkflowPageOptions): Promise<Page<WorkflowSummary>>;
  /** A page of a workflow's versions, newest first. */
  versions(slug: string, page?: WorkflowPageOptions): Promise<Page<WorkflowVersion>>;
  /** One version: a number, a tag, `latest` (the default) or a version id. */
  get(slug: string, version?: string | number, options?: WorkflowCallOptions): Promise<WorkflowVersion>;
  /** Points `tag` at `version`; ApiError `not_found` for an unknown slug or version. */
  tag(slug: string, tag: string, version: number, options?: WorkflowCallOptions): Promise<WorkflowPushResult>;
}

/** Options of `workflowRuns.create`. */
export interface CreateWorkflowRunOptions extends WorkflowCallOptions {
  /** The workflow version: a number, a tag, `latest` (the default) or a version id. */
  version?: string | number;
  /** Sent as `Idempotency-Key`: a retried create with the same key returns the first workflow run. */
  idempotencyKey?: string;
}

/** Filters of `workflowRuns.list` (combined with AND) and the page to read. */
export type ListWorkflowRunsOptions = WorkflowRunListFilters & WorkflowPageOptions;

/** Options of `workflowRuns.waitUntilEnded`. */
export interface WaitForWorkflowRunOptions extends WorkflowCallOptions {
  /** Gives up with an ApiError of code `timeout` after this many milliseconds (default 300 000). */
  timeoutMs?: number;
  /** Milliseconds between polls (default 500). */
  intervalMs?: number;
}

/** Workflow runs (docs/WORKFLOWS.md "Runs"). */
export interface WorkflowRunsClient {
  /**
   * Starts a workflow run of `slug` (at `options.version`, default `latest`): `{id, thread}`. Its
   * steps' runs are on `thread`, each on the channel named after its step.
   */
  create(
    slug: string,
    body: CreateWorkflowRunRequest,
    options?: CreateWorkflowRunOptions,
  ): Promise<CreateRunResponse>;
  /** Reads a workflow run with its steps. */
  get(id: string, options?: WorkflowCallOptions): Promise<WorkflowRun>;
  /** One page of workflow runs, newest first, narrowed by the filters. */
  list(options?: ListWorkflowRunsOptions): Promise<Page<WorkflowRun>>;
  /**
   * Cancels a pending workflow run: it ends `failed` with error `cancelled`, its unfinished steps
   * `cancelled`. ApiError `conflict` when it has already ended.
   */
  cancel(id: string, options?: WorkflowCallOptions): Promise<WorkflowRun>;
  /**
   * Polls a workflow run until it is completed or failed and returns it; transient errors are
   * retried. A step waiting for tool outputs (phase `requires_action`) keeps it pending: answer
   * that step's run with `runs.submitToolOutputs`.
   */
  waitUntilEnded(id: string, options?: WaitForWorkflowRunOptions): Promise<WorkflowRun>;
}

const workflowsPath = "/api/v1/workflows";
const workflowPath = (slug: string) => `${workflowsPath}/${encodeURIComponent(slug)}`;
const workflowRunPath = (id: string) => `/api/v1/workflowruns/${encodeURIComponent(id)}`;
const summaryPage = pageOf(workflowSummarySchema);
const versionPage = pageOf(workflowVersionSchema);
const workflowRunPage = pageOf(workflowRunSchema);

const pageQuery = ({ cursor, limit }: WorkflowPageOptions) =>
  queryString({ cursor: cursor ?? undefined, limit });

/** `/api/v1/workflows` over the client's requester. */
export function createWorkflowsClient({ request }: RestRequester): WorkflowsClient {
  return {
    push: (file, options = {}) =>
      request("POST", workflowsPath, workflowPushResultSchema, { body: file, signal: options.signal }),
    list: (page = {}) =>
      request("GET", `${workflowsPath}${pageQuery(page)}`, summaryPage, { signal: page.signal }),
    versions: (slug, page = {}) =>
      request("GET", `${workflowPath(slug)}/versions${pageQuery(page)}`, versionPage, {
        signal: page.signal,
      }),
    get: (slug, version = "latest", options = {}) =>
      request("GET", `${workflowPath(slug)}/${encodeURIComponent(String(version))}`, workflowVersionSchema, {
        signal: options.signal,
      }),
    tag: (slug, tag, version, options = {}) =>
      request("PUT", `${workflowPath(slug)}/tags/${encodeURIComponent(tag)}`, workflowPushResultSchema, {
        body: { version },
        signal: options.signal,
      }),
  };
}

/** `/api/v1/workflows/{slug}/{version}/runs` and `/api/v1/workflowruns` over the client's requester. */
export function createWorkflowRunsClient({ request }: RestRequester): WorkflowRunsClient {
  const get: WorkflowRunsClient["get"] = (id, options = {}) =>
    request("GET", workflowRunPath(id), workflowRunSchema, { signal: options.signal });
  return {
    create(slug, body, { version = "latest", idempotencyKey, signal } = {}) {
      const headers: Record<string, string> = {};
      if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
      const path = `${workflowPath(slug)}/${encodeURIComponent(String(version))}/runs`;
      return request("POST", path, createRunResponseSchema, { body, headers, signal });
    },
    get,
    list: ({ signal, cursor, limit, ...filters } = {}) =>
      request(
        "GET",
        `/api/v1/workflowruns${queryString({ ...filters, cursor: cursor ?? undefined, limit })}`,
        workflowRunPage,
        { signal },
      ),
    cancel: (id, options = {}) =>
      request("POST", `${workflowRunPath(id)}/cancel`, workflowRunSchema, { signal: options.signal }),
    waitUntilEnded: (id, options = {}) => pollUntilEnded(get, id, options),
  };
}

async function pollUntilEnded(
  get: WorkflowRunsClient["get"],
  id: string,
  { timeoutMs = 300_000, intervalMs = 500, signal }: WaitForWorkflowRunOptions,
): Promise<WorkflowRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    try {
      const workflowRun = await get(id, { signal });
      if (workflowRun.status !== "pending") return workflowRun;
    } catch (error) {
      if (!(ApiError.isInstance(error) && error.isRetryable)) throw error;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0)
      throw new ApiError(0, "timeout", `workflow run ${id} still pending after ${timeoutMs} ms`);
    await delay(Math.min(intervalMs, remaining), signal);
  }
}
