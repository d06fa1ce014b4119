import type { Cost, RequiredAction, RunStep, TokenUsage, ToolCall } from "@promptrun/contract";
import { useState } from "react";
import { Link } from "wouter";
import { ErrorNotice } from "../components/notice.tsx";
import type { LiveRun } from "./playground-run.ts";
import { formatCount, formatUsd } from "./prompt-format.ts";

const json = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value, null, 2));

/** A typed tool output: JSON when it parses as JSON, else the text as it is. */
const parseOutput = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

function UsageText({ usage }: { usage: TokenUsage }) {
  return (
    <>
      {formatCount(usage.input)} in
      {usage.inputCached > 0 ? ` (${formatCount(usage.inputCached)} cached)` : ""},{" "}
      {formatCount(usage.output)} out
      {usage.reasoning > 0 ? ` (${formatCount(usage.reasoning)} reasoning)` : ""}, {formatCount(usage.total)}{" "}
      total
    </>
  );
}

function CostText({ cost }: { cost: Cost }) {
  const unpriced = cost.success.priced === false;
  return (
    <>
      {formatUsd(cost.total)}
      {cost.retries.total > 0 && ` (${formatUsd(cost.retries.total)} of it on retries)`}
      {unpriced && " — the model has no known price"}
    </>
  );
}

function ToolCallView({ call, step }: { call: ToolCall; step: RunStep }) {
  const result = step.toolResults.find((candidate) => candidate.toolCallId === call.id);
  return (
    <div className="tool-call">
      <p>
        Tool call <code>{call.name}</code> <span className="muted">({call.id})</span>
      </p>
      <pre>{json(call.arguments)}</pre>
      {result ? (
        <>
          <p>
            Result{result.isError ? " (error)" : ""}, by the {result.executedBy}:
          </p>
          <pre>{json(result.output)}</pre>
        </>
      ) : (
        <p className="muted">No result yet.</p>
      )}
    </div>
  );
}

function StepsView({ steps }: { steps: RunStep[] }) {
  if (steps.length === 0) return null;
  return (
    <>
      <h3>Steps</h3>
      <ol className="steps">
        {steps.map((step) => (
          <li key={step.index} className="step">
            <p>
              Step {step.index + 1}: <code>{step.model}</code>, finished by {step.finishReason ?? "—"};{" "}
              <UsageText usage={step.usage} />; <CostText cost={step.cost} />
            </p>
            {step.text && <pre className="step-output">{step.text}</pre>}
            {step.toolCalls.map((call) => (
              <ToolCallView key={call.id} call={call} step={step} />
            ))}
          </li>
        ))}
      </ol>
    </>
  );
}

/** The pending tool calls of a paused run, each with a box for its output (JSON or text). */
function ToolOutputsForm({
  action,
  onSubmit,
}: {
  action: RequiredAction;
  onSubmit: (outputs: Array<{ toolCallId: string; output: unknown }>) => Promise<void>;
}) {
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const send = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit(
        action.toolCalls.map((call) => ({ toolCallId: call.id, output: parseOutput(texts[call.id] ?? "") })),
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={send} aria-labelledby="tool-outputs-title">
      <h3 id="tool-outputs-title">The run waits for tool outputs</h3>
      <p className="muted">
        Until {new Date(action.expiresAt).toLocaleString()}. Type each output as JSON or plain text.
      </p>
      {action.toolCalls.map((call) => (
        <div key={call.id} className="pending-tool">
          <p>
            <code>{call.name}</code> called with:
          </p>
          <pre>{json(call.arguments)}</pre>
          <label htmlFor={`tool-output-${call.id}`}>Output of {call.name}</label>
          <textarea
            id={`tool-output-${call.id}`}
            rows={3}
            className="code-input"
            value={texts[call.id] ?? ""}
            onChange={(event) => setTexts((previous) => ({ ...previous, [call.id]: event.target.value }))}
          />
        </div>
      ))}
      {error !== null && <ErrorNotice error={error} />}
      <button type="submit" disabled={busy}>
        {busy ? "Sending…" : "Submit tool outputs"}
      </button>
    </form>
  );
}

const STATUS_WORDS: Record<LiveRun["status"], string> = {
  connecting: "connecting",
  queued: "queued",
  running: "running",
  requires_action: "requires action",
  completed: "completed",
  failed: "failed",
};

/** Status, ids (linked to the run and thread screens), and once known, usage and cost. */
function RunFacts({ live }: { live: LiveRun }) {
  const { run } = live;
  return (
    <dl className="run-facts">
      <dt>Status</dt>
      <dd>
        <span className={`status-badge ${live.status}`} data-testid="run-status">
          {STATUS_WORDS[live.status]}
        </span>
      </dd>
      {live.runId && (
        <>
          <dt>Run</dt>
          <dd>
            <Link href={`/runs/${live.runId}`}>
              <code>{live.runId}</code>
            </Link>
          </dd>
        </>
      )}
      <dt>Thread</dt>
      <dd>
        <Link href={`/threads/${live.thread}`}>
          <code>{live.thread}</code>
        </Link>
      </dd>
      {run?.tokenUsage && (
        <>
          <dt>Usage</dt>
          <dd data-testid="run-usage">
            <UsageText usage={run.tokenUsage} />
          </dd>
        </>
      )}
      {run?.cost && (
        <>
          <dt>Cost</dt>
          <dd data-testid="run-cost">
            <CostText cost={run.cost} />
          </dd>
        </>
      )}
    </dl>
  );
}

/** A run as it streams: its text, status, pending tool calls, then steps, usage and cost. */
export function RunView({
  live,
  onSubmitToolOutputs,
}: {
  live: LiveRun;
  onSubmitToolOutputs: (outputs: Array<{ toolCallId: string; output: unknown }>) => Promise<void>;
}) {
  const { run } = live;
  return (
    <section className="panel" aria-labelledby="run-title">
      <h2 id="run-title">Run</h2>
      <RunFacts live={live} />
      {live.error !== null && <ErrorNotice error={live.error} />}
      {run?.error && <ErrorNotice error={run.error} />}
      <h3 id="run-output-title">Output</h3>
      <div
        className="run-output"
        role="log"
        aria-labelledby="run-output-title"
        aria-busy={live.status === "running"}
      >
        {live.text || (
          <span className="muted">{live.status === "completed" ? "(no text)" : "Waiting for tokens…"}</span>
        )}
      </div>
      {live.requiredAction && (
        <ToolOutputsForm
          key={live.requiredAction.expiresAt}
          action={live.requiredAction}
          onSubmit={onSubmitToolOutputs}
        />
      )}
      {run && <StepsView steps={run.steps} />}
    </section>
  );
}
