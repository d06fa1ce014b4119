import { ApiError, type ConnectionStatus } from "@promptrun/client";
import type {
  CreateRunResponse,
  StreamEnvelope,
  StreamTokenResponse,
  WorkflowRun,
  WorkflowRunPhase,
  WorkflowRunStatus,
  WorkflowRunStep,
  WorkflowStepEvent,
  WorkflowStepStatus,
} from "@promptrun/contract";
import {
  type QueryClient,
  type UseMutationResult,
  type UseQueryResult,
  useMutation,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import { useCallback, useMemo } from "react";
import { usePromptrunBackend } from "./promptrun-provider.tsx";
import { requireBackendMethod } from "./require-backend-method.ts";
import { workflowRunQueryKey } from "./run-query-key.ts";
import type { RunStreamState } from "./thread-state.ts";
import { useThreadStream } from "./use-thread-stream.ts";

/** Options of {@link useWorkflowRun}. */
export interface UseWorkflowRunOptions {
  /** Reads the workflow run (default: the backend's `getWorkflowRun`). */
  getWorkflowRun?: (id: string, options: { signal: AbortSignal }) => Promise<WorkflowRun>;
  /** Mints a stream token for the workflow run's thread (default: the backend's token route). */
  getToken?: (thread: string) => Promise<string | StreamTokenResponse>;
  /** Set false to only poll, without subscribing to the thread (default true). */
  stream?: boolean;
  /** Poll interval while pending, in ms (default 5000): a fallback, the stream refreshes it at once. */
  intervalMs?: number;
  enabled?: boolean;
}

/** A workflow run's step with the text to show for it. */
export interface LiveWorkflowRunStep extends WorkflowRunStep {
  /**
   * The step's output once it has one; before that, its run's text streamed so far (when the
   * subscription saw the run start: earlier tokens are not replayed); else null.
   */
  text: string | null;
}

/** What {@link useWorkflowRun} returns. */
export interface WorkflowRunState {
  /** The workflow run as last read (and patched by its events); undefined before the first read. */
  workflowRun: WorkflowRun | undefined;
  /** The workflow run's status; `idle` without an id, `loading` before the first read, `error` when it failed. */
  status: WorkflowRunStatus | "idle" | "loading" | "error";
  /** While pending: queued, running or requires_action (a step waits for tool outputs); else null. */
  phase: WorkflowRunPhase | null;
  /** The steps in file order, with their live text. */
  steps: LiveWorkflowRunStep[];
  /** Why reading the workflow run failed (an ApiError); the run's own failure is `workflowRun.error`. */
  error: Error | null;
  /** The thread subscription: `open` while live; `closed` once the workflow run ended. */
  connection: ConnectionStatus;
  /** The underlying react-query result (`refetch`, `isFetching`, …). */
  query: UseQueryResult<WorkflowRun, Error>;
}

const endedStepStatuses: ReadonlySet<WorkflowStepStatus> = new Set([
  "completed",
  "failed",
  "skipped",
  "cancelled",
]);

/**
 * The workflow run with a step's new status (and run) from its `workflow.step` event, before the
 * read that follows lands; null when it changes nothing (an unknown step, a replayed older change).
 */
export function applyWorkflowStepEvent(run: WorkflowRun, event: WorkflowStepEvent): WorkflowRun | null {
  const { step: stepId, status, runId } = event;
  // Steps only move forward (pending → running → ended): an older event never undoes a newer read.
  const known = run.steps.find((step) => step.id === stepId);
  if (run.status !== "pending" || !known || endedStepStatuses.has(known.status) || known.status === status)
    return null;
  const steps = run.steps.map((step) =>
    step.id === stepId ? { ...step, status, runId: runId ?? step.runId } : step,
  );
  return { ...run, steps, phase: run.phase === "queued" ? "running" : run.phase };
}

const isStepRun = (run: WorkflowRun | undefined, runId: string) =>
  run?.steps.some((step) => step.runId === runId) ?? false;

/** What a thread event means for the workflow run `id`: patch it, read it again, or nothing. */
function onThreadEvent(queryClient: QueryClient, id: string, envelope: StreamEnvelope): void {
  const queryKey = workflowRunQueryKey(id);
  const refresh = () => void queryClient.invalidateQueries({ queryKey });
  switch (envelope.type) {
    case "ready":
    case "reset":
      // Live now (or events were lost): a read from here on misses nothing the stream will not bring.
      refresh();
      return;
    case "workflow.step":
      if (envelope.data.workflowRunId !== id) return;
      queryClient.setQueryData<WorkflowRun>(
        queryKey,
        (run) => run && (applyWorkflowStepEvent(run, envelope.data) ?? run),
      );
      // The event carries the status; the step's output, error and times come with the read.
      refresh();
      return;
    case "workflow.completed":
    case "workflow.failed":
      // Ended: read it whole, so the status, the output and every step's final state change
      // together (the subscription, and with it the steps' live text, ends with that read).
      if (envelope.data.workflowRunId === id) refresh();
      return;
    case "run.requires_action":
    case "run.step":
      // A step's run pausing for tool outputs (or going on after them) changes the workflow's phase.
      if (isStepRun(queryClient.getQueryData<WorkflowRun>(queryKey), envelope.data.runId)) refresh();
      return;
  }
}

/**
 * A run's streamed text, when the subscription saw it start (`run.started` names its prompt):
 * tokens sent before the subscription opened are not replayed, and a tail would read as a whole.
 */
const liveText = (run: RunStreamState | undefined): string | null => (run?.prompt ? run.text : null);

/** The steps with their text: the output once there is one, else the live text of the step's run. */
const liveSteps = (
  run: WorkflowRun | undefined,
  streamed: Record<string, RunStreamState>,
): LiveWorkflowRunStep[] =>
  (run?.steps ?? []).map((step) => ({
    ...step,
    text: step.output ?? liveText(step.runId ? streamed[step.runId] : undefined),
  }));

/**
 * Reads a workflow run through the app's backend (`getWorkflowRun`) and follows it live: while it
 * is pending it subscribes to its thread, applies each `workflow.step` event at once and reads
 * it again after it, and after `workflow.completed` / `workflow.failed` (a poll every `intervalMs`
 * is the fallback); the subscription ends with the workflow run. Each step's `text` streams in while
 * its run answers.
 */
export function useWorkflowRun(
  id: string | null | undefined,
  options: UseWorkflowRunOptions = {},
): WorkflowRunState {
  const backend = usePromptrunBackend();
  const queryClient = useQueryClient();
  const intervalMs = options.intervalMs ?? 5_000;
  const enabled = Boolean(id) && (options.enabled ?? true);
  const query = useQuery({
    queryKey: workflowRunQueryKey(id ?? ""),
    queryFn: ({ signal }) =>
      options.getWorkflowRun
        ? options.getWorkflowRun(id!, { signal })
        : requireBackendMethod(backend, "getWorkflowRun")(id!, { signal }),
    enabled,
    refetchInterval: (current) => (current.state.data?.status === "pending" ? intervalMs : false),
    // Retrying a 404 or 401 cannot help; network errors, 429 and 5xx can.
    retry: (failures, error) => failures < 3 && (!ApiError.isInstance(error) || error.isRetryable),
  });
  const workflowRun = query.data;
  const onEvent = useCallback(
    (envelope: StreamEnvelope) => {
      if (id) onThreadEvent(queryClient, id, envelope);
    },
    [queryClient, id],
  );
  const stream = useThreadStream(workflowRun?.thread, {
    enabled: enabled && workflowRun?.status === "pending" && (options.stream ?? true),
    onEvent,
    ...(options.getToken ? { getToken: options.getToken } : {}),
  });
  const steps = useMemo(() => liveSteps(workflowRun, stream.runs), [workflowRun, stream.runs]);
  const loadingStatus = query.isError ? "error" : enabled ? "loading" : "idle";
  return {
    workflowRun,
    status: workflowRun?.status ?? loadingStatus,
    phase: workflowRun?.phase ?? null,
    steps,
    error: query.error,
    connection: stream.status,
    query,
  };
}

/**
 * A mutation that starts a workflow run through the app's backend (`createWorkflowRun`, which
 * holds the API key); `{id, thread}` for `useWorkflowRun`. `TVariables` is whatever that route accepts.
 */
export function useCreateWorkflowRun<TVariables = unknown>(): UseMutationResult<
  CreateRunResponse,
  Error,
  TVariables
> {
  const backend = usePromptrunBackend();
  return useMutation({
    mutationFn: (variables: TVariables) => requireBackendMethod(backend, "createWorkflowRun")(variables),
  });
}
