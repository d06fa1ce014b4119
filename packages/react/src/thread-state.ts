import type { ApiError, ConnectionStatus } from "@promptrun/client";
import type { Cost, FinishReason, RunMemory, StreamEnvelope, TokenUsage } from "@promptrun/contract";

/** What a thread subscriber knows about one run, built from its events. */
export interface RunStreamState {
  runId: string;
  channel: string;
  prompt: { slug: string; version: number } | null;
  status: "streaming" | "completed" | "failed";
  /** Provider attempt whose text is shown (a retry restarts the text). */
  attempt: number;
  /** Text so far; the final output once completed. */
  text: string;
  /** Index the next token should carry; replayed duplicates below it are ignored. */
  nextTokenIndex: number;
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
    case "run.started": {
      const { runId, channel, prompt } = envelope.data;
      const attempt = envelope.data.attempt ?? 1;
      const known = next.runs[runId];
      if (known && (known.status !== "streaming" || attempt <= known.attempt)) return next;
      // A later attempt means the provider call was retried: its text starts over.
      return withRun(next, { ...newRun(runId, channel), prompt, attempt });
    }
    case "run.token": {
      const { runId, channel, index, delta } = envelope.data;
      const run = next.runs[runId] ?? newRun(runId, channel);
      if (run.status !== "streaming" || index < run.nextTokenIndex) return next;
      return withRun(next, { ...run, text: run.text + delta, nextTokenIndex: index + 1 });
    }
    case "run.completed": {
      const { runId, output, tokenUsage, cost, finishedAt } = envelope.data;
      const run = next.runs[runId] ?? newRun(runId, "default");
      return withRun(next, {
        ...run,
        status: "completed",
        text: output,
        tokenUsage,
        cost,
        finishedAt,
        // Absent from servers older than structured output.
        outputJson: envelope.data.outputJson ?? null,
        finishReason: envelope.data.finishReason ?? null,
        memory: envelope.data.memory ?? null,
      });
    }
    case "run.failed": {
      const { runId, error, cost, finishedAt } = envelope.data;
      const run = next.runs[runId] ?? newRun(runId, "default");
      return withRun(next, { ...run, status: "failed", error, cost, finishedAt });
    }
  }
}
