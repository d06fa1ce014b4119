import type { ApiError, ConnectionStatus } from "@promptrun/client";
import type {
  Cost,
  FinishReason,
  RequiredAction,
  RunMemory,
  StreamEnvelope,
  TokenUsage,
  ToolCall,
} from "@promptrun/contract";

/**
 * Where a tool call stands: `running` (asked for; a server tool executing, or a client tool not
 * yet announced as awaited), `awaiting-output` (the run waits for the caller's output), `done`,
 * `error` (its result is an error the model sees).
 */
export type ToolCallState = "running" | "awaiting-output" | "done" | "error";

/**
 * What a run did, in order, ready to render: each model call's text, and the tool calls it made.
 * `step` is the model call (from 0) the part belongs to.
 */
export type RunPart =
  | { type: "text"; step: number; text: string }
  | {
      type: "tool-call";
      step: number;
      toolCallId: string;
      name: string;
      arguments: ToolCall["arguments"];
      state: ToolCallState;
    };

/** What a thread subscriber knows about one run, built from its events. */
export interface RunStreamState {
  runId: string;
  channel: string;
  prompt: { slug: string; version: number } | null;
  /** `requires_action`: paused until the caller submits the outputs of `requiredAction`'s calls. */
  status: "streaming" | "requires_action" | "completed" | "failed";
  /** Provider attempt whose text is shown (a retry restarts the current step's text). */
  attempt: number;
  /**
   * Text of the model call under way; the final output once completed (a run's answer is its last
   * step's text). Every step's text is in `parts`.
   */
  text: string;
  /** Index the next token should carry; replayed duplicates below it are ignored. */
  nextTokenIndex: number;
  /** The model call under way (`run.step`), from 0; a run that calls tools has several. */
  step: number;
  /** The token index the current step started at (where a retry of the step restarts). */
  stepTokenIndex: number;
  /** Text and tool calls in the order they happened. */
  parts: RunPart[];
  /** The client tool calls the run waits for while `requires_action`; null otherwise. */
  requiredAction: RequiredAction | null;
  tokenUsage: TokenUsage | null;
  cost: Cost | null;
  /**
   * The parsed JSON output (from `run.completed`) when the prompt has an output schema; null
   * otherwise, and until the run completes (docs/PRODUCT-RULES.md "Runs").
   */
  outputJson: unknown;
  /** Why the last model call stopped (from `run.completed`); null until then. */
  finishReason: FinishReason | null;
  /** Thread history the run carried and left out (from `run.completed`); null until then. */
  memory: RunMemory | null;
  error: string | null;
  finishedAt: string | null;
}

/** Everything `useThreadStream` exposes about a subscription. */
export interface ThreadStreamState {
  /** Runs seen on the thread, by id. */
  runs: Record<string, RunStreamState>;
  /** Run ids in the order they first appeared. */
  runIds: string[];
  status: ConnectionStatus;
  error: ApiError | null;
  lastEventId: string | null;
  /** True after a `reset`: events were missed (runs in progress may lack text until they end). */
  missedEvents: boolean;
}

/**
 * What the reducer folds: a stream event, several at once (token events batched per animation
 * frame), a connection change, or a fresh start (new thread).
 */
export type ThreadStreamAction =
  | { type: "event"; envelope: StreamEnvelope }
  | { type: "events"; envelopes: StreamEnvelope[] }
  | { type: "connection"; status: ConnectionStatus; error: ApiError | null }
  | { type: "restart" };

/** Before the first connection: nothing seen, connecting. */
export const initialThreadStreamState: ThreadStreamState = {
  runs: {},
  runIds: [],
  status: "connecting",
  error: null,
  lastEventId: null,
  missedEvents: false,
};

const newRun = (runId: string, channel: string): RunStreamState => ({
  runId,
  channel,
  prompt: null,
  status: "streaming",
  attempt: 1,
  text: "",
  nextTokenIndex: 0,
  step: 0,
  stepTokenIndex: 0,
  parts: [],
  requiredAction: null,
  tokenUsage: null,
  cost: null,
  outputJson: null,
  finishReason: null,
  memory: null,
  error: null,
  finishedAt: null,
});

function withRun(state: ThreadStreamState, run: RunStreamState): ThreadStreamState {
  const known = run.runId in state.runs;
  return {
    ...state,
    runs: { ...state.runs, [run.runId]: run },
    runIds: known ? state.runIds : [...state.runIds, run.runId],
  };
}

const isEnded = (run: RunStreamState) => run.status === "completed" || run.status === "failed";

/** The parts without the text of `step` (a retried step starts its text over; an output replaces it). */
const withoutStepText = (parts: RunPart[], step: number): RunPart[] =>
  parts.filter((part) => part.type !== "text" || part.step !== step);

/** `delta` appended to the text part of `step` at the end, or as a new one. */
function withText(parts: RunPart[], step: number, delta: string): RunPart[] {
  const last = parts.at(-1);
  if (last?.type === "text" && last.step === step)
    return [...parts.slice(0, -1), { ...last, text: last.text + delta }];
  return [...parts, { type: "text", step, text: delta }];
}

/** The tool-call part of `toolCallId` changed by `change`; parts unchanged when there is none. */
const withToolCall = (
  parts: RunPart[],
  toolCallId: string,
  change: (part: Extract<RunPart, { type: "tool-call" }>) => RunPart,
): RunPart[] =>
  parts.map((part) => (part.type === "tool-call" && part.toolCallId === toolCallId ? change(part) : part));

const hasToolCall = (parts: RunPart[], toolCallId: string) =>
  parts.some((part) => part.type === "tool-call" && part.toolCallId === toolCallId);

const toolCallPart = (step: number, toolCall: ToolCall, state: ToolCallState): RunPart => ({
  type: "tool-call",
  step,
  toolCallId: toolCall.id,
  name: toolCall.name,
  arguments: toolCall.arguments,
  state,
});

/** A run's pause: its calls awaited (added when their `run.tool_call` was missed). */
function paused(run: RunStreamState, requiredAction: RequiredAction): RunStreamState {
  let parts = run.parts;
  for (const call of requiredAction.toolCalls) {
    parts = hasToolCall(parts, call.id)
      ? withToolCall(parts, call.id, (part) => ({ ...part, state: "awaiting-output" }))
      : [...parts, toolCallPart(run.step, call, "awaiting-output")];
  }
  return { ...run, status: "requires_action", requiredAction, parts };
}

type RunEnvelope = Extract<StreamEnvelope, { type: `run.${string}` }>;
type DataOf<Type extends RunEnvelope["type"]> = Extract<RunEnvelope, { type: Type }>["data"];

function onStarted(known: RunStreamState | undefined, data: DataOf<"run.started">): RunStreamState | null {
  const { runId, channel, prompt } = data;
  const attempt = data.attempt ?? 1;
  if (!known) return { ...newRun(runId, channel), prompt, attempt };
  if (isEnded(known)) return null;
  // The run may be known from its first `run.step`, which comes before `run.started`.
  const identified = { ...known, channel, prompt };
  if (attempt <= known.attempt) return identified;
  // A later attempt means the provider call was retried: this step's text starts over.
  return {
    ...identified,
    attempt,
    text: "",
    nextTokenIndex: known.stepTokenIndex,
    parts: withoutStepText(known.parts, known.step),
  };
}

function onStep(
  known: RunStreamState | undefined,
  { runId, step }: DataOf<"run.step">,
): RunStreamState | null {
  const run = known ?? newRun(runId, "default");
  // A replayed or older step changes nothing.
  if (isEnded(run) || (known && step <= known.step)) return null;
  // A step after a pause: the awaited calls were answered (client outputs send no tool_result).
  const parts = run.parts.map((part) =>
    part.type === "tool-call" && part.state === "awaiting-output"
      ? { ...part, state: "done" as const }
      : part,
  );
  return {
    ...run,
    parts,
    status: "streaming",
    requiredAction: null,
    step,
    stepTokenIndex: run.nextTokenIndex,
    text: "",
  };
}

function onToken(known: RunStreamState | undefined, data: DataOf<"run.token">): RunStreamState | null {
  const run = known ?? newRun(data.runId, data.channel);
  if (run.status !== "streaming" || data.index < run.nextTokenIndex) return null;
  return {
    ...run,
    text: run.text + data.delta,
    nextTokenIndex: data.index + 1,
    parts: withText(run.parts, run.step, data.delta),
  };
}

function onCompleted(known: RunStreamState | undefined, data: DataOf<"run.completed">): RunStreamState {
  const run = known ?? newRun(data.runId, "default");
  const { output } = data;
  // The output is the last step's whole text, even where tokens were missed.
  const parts = withoutStepText(run.parts, run.step);
  return {
    ...run,
    status: "completed",
    text: output,
    requiredAction: null,
    parts: output === "" ? parts : withText(parts, run.step, output),
    tokenUsage: data.tokenUsage,
    cost: data.cost,
    finishedAt: data.finishedAt,
    // Absent from servers older than structured output.
    outputJson: data.outputJson ?? null,
    finishReason: data.finishReason ?? null,
    memory: data.memory ?? null,
  };
}

/** The run an event changes, as it becomes; null when it changes nothing (a replay, an ended run). */
function foldRunEvent(runs: ThreadStreamState["runs"], envelope: RunEnvelope): RunStreamState | null {
  const known = runs[envelope.data.runId];
  switch (envelope.type) {
    case "run.started":
      return onStarted(known, envelope.data);
    case "run.step":
      return onStep(known, envelope.data);
    case "run.token":
      return onToken(known, envelope.data);
    case "run.tool_call": {
      const { runId, step, toolCall } = envelope.data;
      const run = known ?? newRun(runId, "default");
      if (isEnded(run) || hasToolCall(run.parts, toolCall.id)) return null;
      return { ...run, parts: [...run.parts, toolCallPart(step, toolCall, "running")] };
    }
    case "run.tool_result": {
      if (!known || isEnded(known)) return null;
      const state: ToolCallState = envelope.data.isError ? "error" : "done";
      return {
        ...known,
        parts: withToolCall(known.parts, envelope.data.toolCallId, (part) => ({ ...part, state })),
      };
    }
    case "run.requires_action": {
      const run = known ?? newRun(envelope.data.runId, "default");
      return isEnded(run) ? null : paused(run, envelope.data.requiredAction);
    }
    case "run.completed":
      return onCompleted(known, envelope.data);
    case "run.retrieval":
      // The chunks a run retrieved are on the run itself (`retrieval`, `citations`: useRun).
      return null;
    case "run.failed": {
      const { runId, error, cost, finishedAt } = envelope.data;
      const run = known ?? newRun(runId, "default");
      return { ...run, status: "failed", requiredAction: null, error, cost, finishedAt };
    }
  }
}

/** Folds one stream event into the thread state (pure; the hook's reducer). */
export function threadStreamReducer(state: ThreadStreamState, action: ThreadStreamAction): ThreadStreamState {
  if (action.type === "restart") return initialThreadStreamState;
  if (action.type === "events") {
    return action.envelopes.reduce(
      (folded, envelope) => threadStreamReducer(folded, { type: "event", envelope }),
      state,
    );
  }
  if (action.type === "connection") {
    // "open" is reported on `ready`, when the subscription is actually live.
    if (action.status === "open") return state;
    return { ...state, status: action.status, error: action.error ?? state.error };
  }
  const { envelope } = action;
  const next = envelope.id ? { ...state, lastEventId: envelope.id } : state;
  switch (envelope.type) {
    case "ready":
      return { ...next, status: "open", error: null };
    case "reset":
      return { ...next, missedEvents: true };
    case "end":
      return { ...next, status: "reconnecting" };
    case "workflow.started":
    case "workflow.step":
    case "workflow.completed":
    case "workflow.failed":
      // A workflow's own events; its steps' runs arrive as run.* events (useWorkflowRun reads these).
      return next;
    default: {
      const run = foldRunEvent(next.runs, envelope);
      return run ? withRun(next, run) : next;
    }
  }
}
