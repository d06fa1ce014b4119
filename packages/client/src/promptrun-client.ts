import {
  type CreateRunRequest,
  type CreateRunResponse,
  createRunResponseSchema,
  type Page,
  type PromptRun,
  promptRunSchema,
  type RequiredAction,
  type RunMessages,
  runMessagesSchema,
  type StreamEnvelope,
  type StreamTokenResponse,
  type SubmitToolOutputsRequest,
  streamTokenResponseSchema,
  type ThreadImportRequest,
  type ThreadImportResult,
  type ThreadMessagesPage,
  type UsageResponse,
} from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { delay } from "./delay.ts";
import { createKnowledgeBasesClient, type KnowledgeBasesClient } from "./knowledge-bases.ts";
import { createPromptTagCalls, type PromptTagCalls } from "./prompt-tags.ts";
import { createPromptsClient, type PromptsClient } from "./prompts.ts";
import type { PromptCacheOptions } from "./prompts-cache.ts";
import { createRenderCall, type RenderPrompt } from "./render.ts";
import { createRestRequester, type FetchFunction } from "./rest-request.ts";

export type { FetchFunction } from "./rest-request.ts";

import type { TypedPromptRun } from "./run-output-json.ts";
import { type ListRunsOptions, listRunPages, listRuns } from "./runs-list.ts";
import { type SubscribeToThreadOptions, subscribeToThread } from "./subscribe-to-thread.ts";
import { importThreadMessages, listThreadMessages, type ThreadMessagesOptions } from "./thread-messages.ts";
import { getUsage, type UsageOptions } from "./usage.ts";
import {
  createWorkflowRunsClient,
  createWorkflowsClient,
  type WorkflowRunsClient,
  type WorkflowsClient,
} from "./workflows.ts";

/** Options of {@link createPromptrunClient}. */
export interface PromptrunClientOptions {
  /** Promptrun's base URL, e.g. `http://127.0.0.1:3000` (without `/api/v1`). */
  baseUrl: string;
  /** Tenant API key. Server side only: never hand it to a browser. */
  apiKey?: string;
  /** Replaces the global `fetch`. */
  fetch?: FetchFunction;
  /**
   * Caches `prompts.get` answers (stale-while-revalidate, conditional requests with the ETag).
   * Without it every `prompts.get` asks the server.
   */
  promptCache?: PromptCacheOptions;
}

/** Options of `runs.create`. */
export interface CreateRunOptions {
  /** Sent as `Idempotency-Key`: a retried create with the same key returns the first run. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** One answer to a tool call of a paused run: its `toolCallId` and an `output` (a string or any JSON value). */
export type ToolOutput = SubmitToolOutputsRequest["toolOutputs"][number];

/** A run paused for client tool calls: `phase` is `requires_action` and `requiredAction` lists them. */
export type RunRequiringAction = PromptRun & { requiredAction: RequiredAction };

/** Options of `runs.submitToolOutputs`. */
export interface SubmitToolOutputsOptions {
  /** Sent as `Idempotency-Key`: a retried submission with the same key answers as the first. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Options of `runs.wait`. */
export interface WaitForRunOptions {
  signal?: AbortSignal;
  /** Milliseconds between polls (default 500). */
  intervalMs?: number;
  /** Gives up with an ApiError of code `timeout` after this many milliseconds (default 120 000). */
  timeoutMs?: number;
  /**
   * Answers the run's client tool calls when it pauses (phase `requires_action`): called once per
   * pause with the paused run. Return the outputs (one per call of `run.requiredAction.toolCalls`)
   * and `wait` submits them (with an Idempotency-Key, retried while the error is transient), then
   * keeps waiting; return nothing when the callback submitted them itself. Without it, `wait`
   * resolves with the paused run (still `pending`), since nobody would answer it.
   */
  onRequiresAction?: (
    run: RunRequiringAction,
  ) => ToolOutput[] | undefined | Promise<ToolOutput[] | undefined>;
}

/** Options of `threads.subscribe`: those of {@link subscribeToThread} minus the credentials. */
export type ThreadSubscribeOptions = Omit<SubscribeToThreadOptions, "url" | "token" | "getToken" | "fetch">;

/** A typed client of Promptrun's REST API (`/api/v1`). Every method throws {@link ApiError} on failure. */
export interface PromptrunClient {
  /**
   * Prompts: list, summary, versions, push, `get` with an optional cache and fallback, and
   * `render` (the request a run would send, without running it; see {@link RenderPrompt}).
   */
  prompts: PromptsClient & { render: RenderPrompt } & PromptTagCalls;
  runs: {
    /** Starts a run of prompt `slug` at `version` (number, tag, `latest` or version id). */
    create(
      slug: string,
      version: string | number,
      body: CreateRunRequest,
      options?: CreateRunOptions,
    ): Promise<CreateRunResponse>;
    /**
     * Reads a run. `T` types its `outputJson` (a prompt with an output schema) without checking
     * it; `runOutputJson(run, parser)` checks it.
     */
    get<T = unknown>(id: string, options?: { signal?: AbortSignal }): Promise<TypedPromptRun<T>>;
    /**
     * What the run's first model call was sent (GET /api/v1/promptruns/{id}/messages): the system
     * messages, the thread history it carried, its rendered messages; env values as `[env:NAME]`.
     * `memory` is null while the run is pending (the history shown is what it would carry now).
     */
    messages(id: string, options?: { signal?: AbortSignal }): Promise<RunMessages>;
    /**
     * Polls a run until it is no longer pending and returns it; transient errors are retried. A
     * run that pauses for client tool calls is answered by `onRequiresAction`, or returned paused
     * (`phase: "requires_action"`) without one. `T` types its `outputJson`, as for `get`.
     */
    wait<T = unknown>(id: string, options?: WaitForRunOptions): Promise<TypedPromptRun<T>>;
    /**
     * Answers a paused run's client tool calls (POST /api/v1/promptruns/{id}/tool-outputs): one
     * output per call of its `requiredAction.toolCalls`; the run then continues. Code `conflict`
     * when it is not waiting (or its pause expired), `invalid` for unknown, repeated or missing ids.
     */
    submitToolOutputs(
      id: string,
      toolOutputs: ToolOutput[],
      options?: SubmitToolOutputsOptions,
    ): Promise<CreateRunResponse>;
    /** Cancels a pending run (it ends `failed` with error `cancelled`); code `conflict` if it already ended. */
    cancel(id: string): Promise<PromptRun>;
    /** One page of runs, newest first, narrowed by the filters (combined with AND). */
    list(options?: ListRunsOptions): Promise<Page<PromptRun>>;
    /** Every page of a list in turn (`for await (const page of client.runs.pages({status: "failed"}))`). */
    pages(options?: ListRunsOptions): AsyncIterable<Page<PromptRun>>;
  };
  /**
   * Knowledge bases and their documents (docs/KNOWLEDGE.md): create, list, get, delete;
   * `documents(slug).add/list/get/delete`, `waitUntilReady` and `search`.
   */
  knowledgeBases: KnowledgeBasesClient;
  /** Workflows (docs/WORKFLOWS.md): `push`, `list`, `versions`, `get`, `tag`. */
  workflows: WorkflowsClient;
  /** Workflow runs: `create`, `get`, `list`, `cancel`, `waitUntilEnded`. */
  workflowRuns: WorkflowRunsClient;
  /** Usage and cost of ended runs created in [from, to), grouped by day, prompt, model or environment. */
  usage(options?: UsageOptions): Promise<UsageResponse>;
  threads: {
    /** Mints a short-lived token that lets a browser subscribe to `thread`. Needs the API key. */
    createStreamToken(thread: string): Promise<StreamTokenResponse>;
    /** Subscribes to a thread with tokens minted by this client (server-side consumers). */
    subscribe(thread: string, options?: ThreadSubscribeOptions): AsyncIterable<StreamEnvelope>;
    /** One page of a channel's messages (GET /api/v1/threads/{thread}/messages), oldest first. */
    messages(thread: string, options?: ThreadMessagesOptions): Promise<ThreadMessagesPage>;
    /** Imports history (POST /api/v1/threads/{thread}/messages); a repeated externalId is skipped. */
    import(
      thread: string,
      body: ThreadImportRequest,
      options?: { signal?: AbortSignal },
    ): Promise<ThreadImportResult>;
  };
}

/** Creates a {@link PromptrunClient}. */
export function createPromptrunClient(options: PromptrunClientOptions): PromptrunClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchFunction: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init));

  const requester = createRestRequester({ baseUrl, apiKey: options.apiKey, fetch: fetchFunction });
  const { request } = requester;

  const runs: PromptrunClient["runs"] = {
    create(slug, version, body, createOptions = {}) {
      const headers: Record<string, string> = {};
      if (createOptions.idempotencyKey) headers["idempotency-key"] = createOptions.idempotencyKey;
      const path = `/api/v1/prompts/${encodeURIComponent(slug)}/${encodeURIComponent(String(version))}/runs`;
      return request("POST", path, createRunResponseSchema, { body, headers, signal: createOptions.signal });
    },
    async get<T>(id: string, getOptions: { signal?: AbortSignal } = {}) {
      const run = await request("GET", `/api/v1/promptruns/${encodeURIComponent(id)}`, promptRunSchema, {
        signal: getOptions.signal,
      });
      return run as TypedPromptRun<T>;
    },
    messages(id, messagesOptions = {}) {
      return request("GET", `/api/v1/promptruns/${encodeURIComponent(id)}/messages`, runMessagesSchema, {
        signal: messagesOptions.signal,
      });
    },
    async wait<T>(id: string, waitOptions: WaitForRunOptions = {}) {
      const intervalMs = waitOptions.intervalMs ?? 500;
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 120_000);
      const signal = waitOptions.signal;
      const answer = waitOptions.onRequiresAction
        ? pauseAnswerer(waitOptions.onRequiresAction, signal)
        : null;
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        try {
          const run = await runs.get<T>(id, { signal });
          if (run.status !== "pending") return run;
          if (run.phase === "requires_action" && run.requiredAction) {
            if (!answer) return run;
            // Answered: poll on at once, the run is executing again.
            if (await answer(run as unknown as RunRequiringAction)) continue;
          }
        } catch (error) {
          if (!(ApiError.isInstance(error) && error.isRetryable)) throw error;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0)
          throw new ApiError(0, "timeout", `run ${id} still pending after the wait timeout`);
        await delay(Math.min(intervalMs, remaining), signal);
      }
    },
    cancel(id) {
      return request("POST", `/api/v1/promptruns/${encodeURIComponent(id)}/cancel`, promptRunSchema);
    },
    submitToolOutputs(id, toolOutputs, submitOptions = {}) {
      const headers: Record<string, string> = {};
      if (submitOptions.idempotencyKey) headers["idempotency-key"] = submitOptions.idempotencyKey;
      return request(
        "POST",
        `/api/v1/promptruns/${encodeURIComponent(id)}/tool-outputs`,
        createRunResponseSchema,
        {
          body: { toolOutputs } satisfies SubmitToolOutputsRequest,
          headers,
          signal: submitOptions.signal,
        },
      );
    },
    list: (listOptions) => listRuns(request, listOptions),
    pages: (listOptions) => listRunPages(request, listOptions),
  };

  /**
   * `wait`'s answers to pauses: the callback once per pause (its outputs kept), then the
   * submission under one Idempotency-Key per pause, so a retry after a transient error is safe.
   * Resolves true when this call answered the pause (poll again at once), false when it was answered before.
   */
  const pauseAnswerer = (
    onRequiresAction: NonNullable<WaitForRunOptions["onRequiresAction"]>,
    signal: AbortSignal | undefined,
  ) => {
    let current: {
      key: string;
      outputs: ToolOutput[] | undefined;
      idempotencyKey: string;
      done: boolean;
    } | null = null;
    return async (run: RunRequiringAction): Promise<boolean> => {
      const key = `${run.requiredAction.expiresAt}:${run.requiredAction.toolCalls.map((call) => call.id).join(",")}`;
      if (current?.key !== key)
        current = {
          key,
          outputs: await onRequiresAction(run),
          idempotencyKey: crypto.randomUUID(),
          done: false,
        };
      // Answered already (a read that lags behind): wait for the next poll, never answer twice.
      if (current.done) return false;
      if (current.outputs !== undefined)
        await runs.submitToolOutputs(run.id, current.outputs, {
          idempotencyKey: current.idempotencyKey,
          signal,
        });
      current.done = true;
      return true;
    };
  };

  const threads: PromptrunClient["threads"] = {
    createStreamToken(thread) {
      return request(
        "POST",
        `/api/v1/threads/${encodeURIComponent(thread)}/stream-token`,
        streamTokenResponseSchema,
      );
    },
    subscribe(thread, subscribeOptions = {}) {
      return subscribeToThread({
        ...subscribeOptions,
        getToken: () => threads.createStreamToken(thread),
        fetch: fetchFunction,
      });
    },
    messages: (thread, messagesOptions) => listThreadMessages(request, thread, messagesOptions),
    import: (thread, body, importOptions) => importThreadMessages(request, thread, body, importOptions),
  };

  const prompts = {
    ...createPromptsClient(requester, options.promptCache),
    render: createRenderCall(request),
    ...createPromptTagCalls(requester),
  };
  return {
    prompts,
    runs,
    threads,
    knowledgeBases: createKnowledgeBasesClient(requester),
    workflows: createWorkflowsClient(requester),
    workflowRuns: createWorkflowRunsClient(requester),
    usage: (usageOptions) => getUsage(request, usageOptions),
  };
}
