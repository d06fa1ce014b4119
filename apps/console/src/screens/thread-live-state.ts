/**
 * What the live tail of a thread shows, folded from its stream's events: a log (consecutive
 * tokens of a run merged into one entry) and the runs under way with their text so far
 * (docs/PRODUCT-RULES.md "Live streaming": a later run.started of a run is a retry, its text restarts).
 */
import type { StreamEnvelope } from "@promptrun/contract";

export interface LogEntry {
  key: number;
  type: string;
  runId: string | null;
  receivedAt: string;
  /** What happened, in words; for merged tokens the text they appended. */
  detail: string;
  tokens: number;
}

export interface LiveRun {
  runId: string;
  label: string;
  channel: string;
  status: "streaming" | "requires_action" | "completed" | "failed";
  text: string;
}

export interface LiveState {
  log: LogEntry[];
  runs: LiveRun[];
  nextKey: number;
}

/** Entries kept in the log; older ones scroll away. */
const MAX_LOG = 300;
/** Runs kept in the "under way" list (ended ones stay until pushed out). */
const MAX_RUNS = 10;

export const emptyLiveState: LiveState = { log: [], runs: [], nextKey: 1 };

const runIdOf = (event: StreamEnvelope): string | null =>
  "runId" in event.data && typeof event.data.runId === "string" ? event.data.runId : null;

function detailOf(event: StreamEnvelope): string {
  switch (event.type) {
    case "ready":
      return "listening";
    case "reset":
    case "end":
      return event.data.reason;
    case "run.started":
      return `${event.data.prompt.slug}@v${event.data.prompt.version} on ${event.data.channel}${
        event.data.attempt && event.data.attempt > 1 ? `, attempt ${event.data.attempt}` : ""
      }`;
    case "run.token":
      return event.data.delta;
    case "run.completed":
      return `${event.data.tokenUsage.total} tokens, finish ${event.data.finishReason ?? "—"}`;
    case "run.failed":
      return event.data.error;
    case "run.step":
      return `step ${event.data.step + 1}`;
    case "run.tool_call":
      return `${event.data.toolCall.name}(${JSON.stringify(event.data.toolCall.arguments)})`;
    case "run.tool_result":
      return `${event.data.name}${event.data.isError ? " failed" : " answered"}`;
    case "run.requires_action":
      return `waiting for ${event.data.requiredAction.toolCalls.map((call) => call.name).join(", ")}`;
    case "run.retrieval":
      return `${event.data.chunks.length} chunks from ${event.data.knowledgeBase} for "${event.data.query}"`;
    case "workflow.started":
      return `workflow ${event.data.workflow.slug}@v${event.data.workflow.version}`;
    case "workflow.step":
      return `step ${event.data.step} ${event.data.status}`;
    case "workflow.completed":
      return `workflow completed, ${event.data.tokenUsage.total} tokens`;
    case "workflow.failed":
      return `workflow failed: ${event.data.error}`;
  }
}

function foldRuns(runs: LiveRun[], event: StreamEnvelope): LiveRun[] {
  const update = (runId: string, change: (run: LiveRun) => LiveRun) =>
    runs.map((run) => (run.runId === runId ? change(run) : run));
  switch (event.type) {
    case "run.started": {
      const { runId, prompt, channel } = event.data;
      const fresh: LiveRun = {
        runId,
        label: `${prompt.slug}@v${prompt.version}`,
        channel,
        status: "streaming",
        text: "",
      };
      return [fresh, ...runs.filter((run) => run.runId !== runId)].slice(0, MAX_RUNS);
    }
    case "run.token":
      return update(event.data.runId, (run) => ({ ...run, text: run.text + event.data.delta }));
    case "run.step":
      // The tokens of a new model call follow the previous call's: keep them apart.
      return update(event.data.runId, (run) => ({
        ...run,
        status: "streaming",
        text: run.text ? `${run.text}\n` : "",
      }));
    case "run.requires_action":
      return update(event.data.runId, (run) => ({ ...run, status: "requires_action" }));
    case "run.completed":
      return update(event.data.runId, (run) => ({ ...run, status: "completed", text: event.data.output }));
    case "run.failed":
      return update(event.data.runId, (run) => ({ ...run, status: "failed" }));
    default:
      return runs;
  }
}

/** The state after one more event; `receivedAt` is when it arrived (ISO). */
export function foldLiveEvent(state: LiveState, event: StreamEnvelope, receivedAt: string): LiveState {
  const runId = runIdOf(event);
  const last = state.log.at(-1);
  let log: LogEntry[];
  if (event.type === "run.token" && last?.type === "run.token" && last.runId === runId) {
    log = [
      ...state.log.slice(0, -1),
      { ...last, detail: last.detail + event.data.delta, tokens: last.tokens + 1 },
    ];
  } else {
    const entry: LogEntry = {
      key: state.nextKey,
      type: event.type,
      runId,
      receivedAt,
      detail: detailOf(event),
      tokens: event.type === "run.token" ? 1 : 0,
    };
    log = [...state.log, entry].slice(-MAX_LOG);
  }
  return {
    log,
    runs: event.type === "reset" ? [] : foldRuns(state.runs, event),
    nextKey: state.nextKey + 1,
  };
}
