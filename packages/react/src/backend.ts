import { ApiError, type ToolOutput } from "@promptrun/client";
import {
  type CreateRunResponse,
  createRunResponseSchema,
  type KnowledgeDocument,
  knowledgeDocumentSchema,
  type PromptRun,
  promptRunSchema,
  type SearchRequest,
  type SearchResponse,
  type StreamTokenResponse,
  searchResponseSchema,
  streamTokenResponseSchema,
  type WorkflowRun,
  workflowRunSchema,
} from "@promptrun/contract";
import type { z } from "zod";

/**
 * What the hooks need from the app's own backend, which holds the API key. The browser never
 * talks to Promptrun's REST API directly: only to its stream, with a token the backend minted.
 */
export interface PromptrunBackend {
  /** Starts a run; `variables` is whatever the app's backend accepts (see `useCreateRun`). */
  createRun(variables: unknown, options?: { signal?: AbortSignal }): Promise<CreateRunResponse>;
  /** Mints a stream token for `thread`. */
  getStreamToken(thread: string): Promise<StreamTokenResponse>;
  /** Reads a run (the backend checks the user may see it). */
  getRun(id: string, options?: { signal?: AbortSignal }): Promise<PromptRun>;
  /**
   * Answers a paused run's client tool calls (the backend calls Promptrun's
   * `POST /api/v1/promptruns/{id}/tool-outputs` with its API key; a stream token may not).
   * Needed by `useChat`'s `onToolCall` and `submitToolOutputs`.
   */
  submitToolOutputs?(
    runId: string,
    toolOutputs: ToolOutput[],
    options?: { signal?: AbortSignal },
  ): Promise<CreateRunResponse>;
  /**
   * Searches a knowledge base (the backend calls `POST /api/v1/knowledge-bases/{kb}/search` with
   * its API key, after checking the user may). Needed by `useKnowledgeSearch`.
   */
  searchKnowledge?(
    knowledgeBase: string,
    request: SearchRequest,
    options?: { signal?: AbortSignal },
  ): Promise<SearchResponse>;
  /** Reads a document of a knowledge base (its ingestion status). Needed by `useDocument`. */
  getDocument?(
    knowledgeBase: string,
    id: string,
    options?: { signal?: AbortSignal },
  ): Promise<KnowledgeDocument>;
  /**
   * Starts a workflow run; `variables` is whatever the app's backend accepts (it calls
   * `client.workflowRuns.create`). Needed by `useCreateWorkflowRun`.
   */
  createWorkflowRun?(variables: unknown, options?: { signal?: AbortSignal }): Promise<CreateRunResponse>;
  /** Reads a workflow run (the backend checks the user may see it). Needed by `useWorkflowRun`. */
  getWorkflowRun?(id: string, options?: { signal?: AbortSignal }): Promise<WorkflowRun>;
}

/** Paths of the app's backend routes, relative to `baseUrl`. */
export interface BackendPaths {
  /** `POST {thread}` → StreamTokenResponse. Default `/token`. */
  token: string;
  /** `POST <variables>` → `{id, thread}`. Default `/chat`. */
  createRun: string;
  /** `GET` → PromptRun. Default `/runs/<id>`. */
  run: (id: string) => string;
  /** `POST {toolOutputs}` → `{id, thread}`. Default `/runs/<id>/tool-outputs`. */
  toolOutputs: (id: string) => string;
  /** `POST <SearchRequest>` → SearchResponse. Default `/knowledge-bases/<kb>/search`. */
  knowledgeSearch: (knowledgeBase: string) => string;
  /** `GET` → KnowledgeDocument. Default `/knowledge-bases/<kb>/documents/<id>`. */
  document: (knowledgeBase: string, id: string) => string;
  /** `POST <variables>` → `{id, thread}`. Default `/workflow-runs`. */
  createWorkflowRun: string;
  /** `GET` → WorkflowRun. Default `/workflow-runs/<id>`. */
  workflowRun: (id: string) => string;
}

/** Options of {@link createBackend}. */
export interface CreateBackendOptions {
  /** The app's own backend, e.g. `/api` or `https://app.example.com/api`. */
  baseUrl: string;
  paths?: Partial<BackendPaths>;
  /** Extra headers per request (a CSRF token, a session header). */
  headers?: () => Record<string, string> | Promise<Record<string, string>>;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

const defaultPaths: BackendPaths = {
  token: "/token",
  createRun: "/chat",
  run: (id) => `/runs/${encodeURIComponent(id)}`,
  toolOutputs: (id) => `/runs/${encodeURIComponent(id)}/tool-outputs`,
  knowledgeSearch: (knowledgeBase) => `/knowledge-bases/${encodeURIComponent(knowledgeBase)}/search`,
  document: (knowledgeBase, id) =>
    `/knowledge-bases/${encodeURIComponent(knowledgeBase)}/documents/${encodeURIComponent(id)}`,
  createWorkflowRun: "/workflow-runs",
  workflowRun: (id) => `/workflow-runs/${encodeURIComponent(id)}`,
};

/**
 * A {@link PromptrunBackend} over `fetch` to the app's own routes (JSON in, JSON out, errors as
 * `{"error": …}`). Responses are validated against the contract; failures are ApiError values.
 */
export function createBackend(options: CreateBackendOptions): PromptrunBackend {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const paths = { ...defaultPaths, ...options.paths };
  const fetchFunction = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));

  async function call<Schema extends z.ZodType>(
    method: "GET" | "POST",
    path: string,
    schema: Schema,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<z.infer<Schema>> {
    const headers: Record<string, string> = { accept: "application/json", ...(await options.headers?.()) };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetchFunction(`${baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        signal: signal ?? null,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw ApiError.network(error);
    }
    if (!response.ok) throw await ApiError.fromResponse(response);
    const parsed = schema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) {
      throw new ApiError(
        response.status,
        "invalid_response",
        `${method} ${path}: unexpected response shape`,
        {
          cause: parsed.error,
        },
      );
    }
    return parsed.data;
  }

  return {
    createRun: (variables, callOptions) =>
      call("POST", paths.createRun, createRunResponseSchema, variables, callOptions?.signal),
    getStreamToken: (thread) => call("POST", paths.token, streamTokenResponseSchema, { thread }),
    getRun: (id, callOptions) => call("GET", paths.run(id), promptRunSchema, undefined, callOptions?.signal),
    submitToolOutputs: (runId, toolOutputs, callOptions) =>
      call("POST", paths.toolOutputs(runId), createRunResponseSchema, { toolOutputs }, callOptions?.signal),
    searchKnowledge: (knowledgeBase, request, callOptions) =>
      call("POST", paths.knowledgeSearch(knowledgeBase), searchResponseSchema, request, callOptions?.signal),
    getDocument: (knowledgeBase, id, callOptions) =>
      call("GET", paths.document(knowledgeBase, id), knowledgeDocumentSchema, undefined, callOptions?.signal),
    createWorkflowRun: (variables, callOptions) =>
      call("POST", paths.createWorkflowRun, createRunResponseSchema, variables, callOptions?.signal),
    getWorkflowRun: (id, callOptions) =>
      call("GET", paths.workflowRun(id), workflowRunSchema, undefined, callOptions?.signal),
  };
}
